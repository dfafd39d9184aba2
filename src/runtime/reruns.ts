/**
 * Which changes of a controller's primary objects re-run their key.
 *
 * Two kinds ask for nothing: a change of status alone (typically the controller's own
 * status write: the reconcile that wrote it already acted on the rest of the object),
 * and the echo of this process's own write (same resourceVersion: a reconcile made it,
 * and its own requeue follows). Sparing those spares the extra reconcile (and the
 * stale-cache status write conflict) after every create. An echo can arrive before the
 * write's answer, while the key is being reconciled: it then re-adds the key like any
 * change, and {@link OwnWriteEchoFilter.onlyOwnEchoes} looks again when that reconcile
 * ends, once the answers are in. A new generation is never taken for an echo:
 * reconciles do not write the spec, so whoever did (even through this client) asks for
 * a reconcile of it.
 *
 * A key held by a terminal error ({@link TerminalHolds}) is not retried until the object
 * changes in a part a reconcile acts on ({@link nonStatusFingerprint}), or, for a failure
 * outside the object (an external hold, see `isExternalHold`), after a slow per-key
 * backoff as well.
 */
import { DEFAULT_HOLD_BACKOFF } from "./defaults.js";
import { type BackoffOptions, ExponentialBackoff } from "./ratelimit.js";
import { type KubeObject, parseKey } from "./resource.js";
import type { StoreEvent } from "./store.js";

/**
 * The parts of an object a reconcile acts on (not status): a change of any of these
 * enqueues the object, also when a terminal error stopped its retries.
 */
export function nonStatusFingerprint(obj: KubeObject): string {
  const m = obj.metadata ?? {};
  return JSON.stringify([m.generation, m.annotations, m.labels, m.deletionTimestamp, m.finalizers]);
}

/** What the filter asks of the controller it serves. */
export interface EchoFilterDeps {
  /** True when `obj` is the state one of this process's own writes produced. */
  isOwnWrite(obj: KubeObject): boolean;
  /** True while a worker reconciles `key`. */
  isProcessing(key: string): boolean;
}

/**
 * The own-write echo filter of one controller's primary objects. For each event of a
 * primary object: {@link asksForNothing} first; an event it lets through is then
 * {@link noteAdd}ed as the controller queues the key. Every other add of a key (a
 * watched object, a resync) is {@link markRerun}. After a successful reconcile,
 * {@link onlyOwnEchoes} says whether the re-adds it saw may be cancelled; when a
 * reconcile ends either way, {@link forget} clears the key.
 */
export class OwnWriteEchoFilter {
  /** Per key being reconciled: resourceVersions of updates that may echo its writes. */
  private readonly maybeEchoes = new Map<string, string[]>();
  /** Keys being reconciled that something other than a possible echo re-added. */
  private readonly rerun = new Set<string>();

  constructor(private readonly deps: EchoFilterDeps) {}

  /**
   * True when a primary object's event asks for no reconcile: a status-only update, or
   * an update (same generation) that is known to echo this process's own write.
   * Adds and deletes always ask for one.
   */
  asksForNothing(ev: StoreEvent): boolean {
    if (ev.type !== "update") return false;
    if (ev.old && nonStatusFingerprint(ev.old) === nonStatusFingerprint(ev.object)) return true;
    return !specChanged(ev) && this.deps.isOwnWrite(ev.object);
  }

  /**
   * Records that `ev` (let through by {@link asksForNothing}) adds `key`: while the key
   * is being reconciled, a same-generation update may still be the echo of a write
   * whose answer is not in yet; anything else must run again.
   */
  noteAdd(key: string, ev: StoreEvent): void {
    const rv = ev.object.metadata?.resourceVersion;
    if (ev.type === "update" && rv && !specChanged(ev) && this.deps.isProcessing(key)) {
      this.maybeEchoes.set(key, [...(this.maybeEchoes.get(key) ?? []), rv]);
    } else {
      this.markRerun(key);
    }
  }

  /** An add of a key being reconciled that is surely not an echo: it must run again. */
  markRerun(key: string): void {
    if (this.deps.isProcessing(key)) this.rerun.add(key);
  }

  /**
   * After a successful reconcile of `key`: true when something re-added it meanwhile
   * and all of that was the echo of its own writes (now that their answers are in), so
   * the re-add may be cancelled; the reconcile's own requeue stands. Clears the key.
   */
  onlyOwnEchoes(key: string): boolean {
    const versions = this.maybeEchoes.get(key);
    this.maybeEchoes.delete(key);
    const mustRerun = this.rerun.delete(key);
    if (!versions || mustRerun) return false;
    const { namespace, name } = parseKey(key);
    return versions.every((resourceVersion) =>
      this.deps.isOwnWrite({ metadata: { namespace, name, resourceVersion } }),
    );
  }

  /** Forgets what was noted for `key` (its reconcile ended). */
  forget(key: string): void {
    this.maybeEchoes.delete(key);
    this.rerun.delete(key);
  }
}

function specChanged(ev: StoreEvent): boolean {
  return ev.old?.metadata?.generation !== ev.object.metadata?.generation;
}

/** The terminal holds of one controller's keys. */
export class TerminalHolds {
  /** Held key → the fingerprint of the object when its reconcile failed. */
  private readonly held = new Map<string, string>();
  /** Retries of keys held by an external terminal error, per key. */
  private readonly backoff: ExponentialBackoff;

  constructor(backoff: Partial<BackoffOptions> = {}) {
    this.backoff = new ExponentialBackoff({ ...DEFAULT_HOLD_BACKOFF, ...backoff });
  }

  /** Keys currently held. */
  keys(): string[] {
    return [...this.held.keys()];
  }

  /** True when `key` is held. */
  has(key: string): boolean {
    return this.held.has(key);
  }

  /** True when `key` is held and `obj` has not changed since (status aside). */
  holdsUnchanged(key: string, obj: KubeObject): boolean {
    const held = this.held.get(key);
    return held !== undefined && held === nonStatusFingerprint(obj);
  }

  /** Releases `key` (something changed that asks for a reconcile); its backoff stays. */
  release(key: string): void {
    this.held.delete(key);
  }

  /** After a successful reconcile of `key`: released, and its backoff reset. */
  succeeded(key: string): void {
    this.held.delete(key);
    this.backoff.forget(key);
  }

  /**
   * Holds `key` after a terminal failure, with the object as it was (none: the object
   * is gone, nothing to hold). For an external hold, returns the delay before the slow
   * retry (each call doubles it); otherwise resets the key's backoff and returns
   * undefined.
   */
  hold(key: string, obj: KubeObject | undefined, external: boolean): number | undefined {
    if (obj) this.held.set(key, nonStatusFingerprint(obj));
    if (external) return this.backoff.when(key);
    this.backoff.forget(key);
    return undefined;
  }

  /** Releases every key, and resets the backoff of `keys` (e.g. the API key changed). */
  clear(keys: Iterable<string>): void {
    this.held.clear();
    for (const key of keys) this.backoff.forget(key);
  }
}
