import type { StoreEvent } from "./informer-store.js";
import { nonStatusFingerprint } from "./reconcile-attempt.js";
import { type KubeObject, parseKey } from "./resource.js";

/**
 * Which events of one controller's primary objects re-run their key: not a change of
 * status alone, nor the echo of this process's own write (same resourceVersion; never a
 * new generation: reconciles do not write the spec), whose reconcile already acted and
 * requeues itself: sparing them spares a reconcile and a stale-cache status conflict
 * after every create. An echo arriving before the write's answer re-adds the key;
 * {@link onlyOwnEchoes} looks again once the answers are in.
 */
export class OwnWriteEchoFilter {
  /** Per key being reconciled: resourceVersions of updates that may echo its writes. */
  private readonly maybeEchoes = new Map<string, string[]>();
  /** Keys being reconciled that something other than a possible echo re-added. */
  private readonly rerun = new Set<string>();

  /** `isOwnWrite`: `obj` is the state one of this process's own writes produced. */
  constructor(
    private readonly deps: {
      isOwnWrite(obj: KubeObject): boolean;
      isProcessing(key: string): boolean;
    },
  ) {}

  /** True when a primary object's event asks for no reconcile (adds and deletes always do). */
  asksForNothing(ev: StoreEvent): boolean {
    if (ev.type !== "update") return false;
    if (ev.old && nonStatusFingerprint(ev.old) === nonStatusFingerprint(ev.object)) return true;
    return !specChanged(ev) && this.deps.isOwnWrite(ev.object);
  }

  /**
   * Records that `ev` (let through by {@link asksForNothing}) adds `key`: while the key
   * is reconciled, a same-generation update may still echo a write whose answer is not in.
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
   * After a reconcile of `key`: true when all that re-added it meanwhile echoed its own
   * writes (their answers now in), so the re-add may be cancelled. Clears the key.
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
