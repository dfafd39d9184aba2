/**
 * A running controller's keys (controller-runner.ts starts and stops it): the informer events
 * that enqueue one, the workers that reconcile each alone, and what a success does to it (a
 * failure: reconcile-failure.ts). Past its deadline (hung keys must not hold every worker) a
 * reconcile is abandoned: its signal aborts its service calls, and its `ctx.kube` and
 * `ctx.events` (`KubeClient.forReconcile`) send nothing more, so it cannot write stale state.
 */
import { randomUUID } from "node:crypto";
import { setImmediate } from "node:timers/promises";
import type { Logger } from "pino";
import type { ControllerDefinition, ReconcileContext, WatchSpec } from "./controller.js";
import type { ControllerRuntime } from "./controller-runtime.js";
import { DEFAULT_HOLD_BACKOFF } from "./defaults.js";
import { ReconcileTimeoutError } from "./errors.js";
import { type BackoffOptions, ExponentialBackoff } from "./fair-lanes.js";
import type { StoreEvent } from "./informer-store.js";
import { type FailedAttempt, reconcileFailed } from "./reconcile-failure.js";
import { formatKey, type KubeObject, objectKeyString, parseKey, withDeadline } from "./resource.js";
import type { WorkQueue } from "./workqueue.js";

/** A controller's per-key state and handling, fed by the informers to one queue at a time. */
export class ControllerKeys {
  private queue?: WorkQueue;
  readonly terminal: TerminalHolds;
  readonly echoes: OwnWriteEchoFilter;
  /** Routine looks that reached the deadline in a row, by key (reconcile-failure.ts). */
  private readonly quietTimeouts = new Map<string, number>();

  constructor(
    private readonly definition: ControllerDefinition,
    private readonly rt: ControllerRuntime,
    private readonly log: Logger,
  ) {
    this.terminal = new TerminalHolds(rt.holdBackoff);
    this.echoes = new OwnWriteEchoFilter({
      isOwnWrite: (obj) => rt.kube.isOwnWrite(definition.primary, obj),
      isProcessing: (key) => this.queue?.isProcessing(key) ?? false,
    });
  }

  /** Feeds the events of the primary and watched informers to `queue`; returns unsubscribers. */
  subscribe(queue: WorkQueue): Array<() => void> {
    this.queue = queue;
    const { cache } = this.rt;
    const unsubscribe = [cache.informerFor(this.definition.primary).on((ev) => this.onPrimary(ev))];
    for (const w of this.definition.watches) {
      unsubscribe.push(cache.informerFor(w.resource).on((ev) => this.onWatched(ev, w)));
    }
    return unsubscribe;
  }

  /** A key's flow: its primary object's, as cached. */
  flowOf(flowOf: NonNullable<ControllerRuntime["flowOf"]>): (key: string) => string {
    return (key) => flowOf(this.rt.cache.get(this.definition.primary, key));
  }

  private onPrimary(ev: StoreEvent): void {
    const key = objectKeyString(ev.object);
    if (this.definition.primaryStatusChanges) {
      // The controller acts on status another controller writes: every change counts.
      this.terminal.release(key);
      this.echoes.markRerun(key);
      this.queue?.add(key);
      return;
    }
    // Spec (generation), annotations, labels, finalizers and deletion enqueue.
    if (this.echoes.asksForNothing(ev)) return;
    if (ev.type !== "delete" && this.terminal.holdsUnchanged(key, ev.object)) return;
    this.echoes.noteAdd(key, ev);
    this.terminal.release(key);
    this.queue?.add(key);
  }

  private onWatched(ev: StoreEvent, { map, when }: WatchSpec): void {
    if (when?.events && !when.events.includes(ev.type)) return;
    const keys = new Set<string>();
    for (const obj of ev.old ? [ev.object, ev.old] : [ev.object]) {
      if (when?.reasons && !hasReason(obj, when.reasons)) continue;
      try {
        for (const k of map(obj, this.rt.cache)) keys.add(formatKey(k));
      } catch (err) {
        this.log.error({ err }, "watch mapping failed");
      }
    }
    for (const key of keys) {
      this.terminal.release(key);
      this.echoes.markRerun(key);
      this.queue?.add(key);
    }
  }

  /** One worker: reconciles the keys `queue` hands out, one at a time. */
  async work(queue: WorkQueue, signal: AbortSignal): Promise<void> {
    const { definition, rt, log, terminal, echoes, quietTimeouts } = this;
    const attempt = { definition, rt, log, queue, signal, terminal, echoes, quietTimeouts };
    for (let key = await queue.get(); key !== undefined; key = await queue.get()) {
      try {
        await reconcileKey(attempt, key);
      } finally {
        this.echoes.forget(key);
        queue.done(key);
      }
      // A reconcile that awaited nothing real (answered from the cache) ends in microtasks:
      // a turn of the event loop between keys keeps a burst of them from starving I/O.
      await setImmediate();
    }
  }
}

function hasReason(obj: KubeObject, reasons: ReadonlySet<string>): boolean {
  const status = obj.status as { conditions?: { reason?: string }[] } | undefined;
  return status?.conditions?.some((c) => c.reason !== undefined && reasons.has(c.reason)) ?? false;
}

/** What one reconcile of a key needs of its controller ({@link ControllerKeys}). */
export type ReconcileAttempt = FailedAttempt & { readonly terminal: TerminalHolds };

/** Reconciles `keyString` once; a success forgets its backoff (a failure: reconcile-failure.ts). */
export async function reconcileKey(a: ReconcileAttempt, keyString: string): Promise<void> {
  const def = a.definition;
  const labels = { controller: def.name };
  const key = parseKey(keyString);
  const reconcileId = randomUUID();
  const log = a.log.child({ key: keyString, reconcileId });
  const ctx: ReconcileContext = {
    controller: def.name,
    key,
    reconcileId,
    kube: a.rt.kube,
    cache: a.rt.cache,
    clock: a.rt.clock,
    log,
    events: a.rt.events,
    metrics: a.rt.metrics,
    signal: a.signal,
  };
  const started = a.rt.clock.now().getTime();
  const written = new Map<string, KubeObject>();
  a.rt.metrics.activeWorkers.inc(labels);
  try {
    const flow = a.queue.flowOfKeyNow(keyString) ?? "";
    const abandon = new AbortController();
    const signal = AbortSignal.any([a.signal, abandon.signal]);
    const run = def.reconcile(key, {
      ...ctx,
      signal,
      kube: a.rt.kube.forReconcile({ flow, signal, written }),
      events: a.rt.events.forReconcile({ flow, signal }),
    });
    // At the deadline the run is abandoned; its own end (often ReconcileAbandonedError) is ignored.
    const timeoutMs = a.rt.reconcileTimeoutMs ?? 0;
    const result = await (timeoutMs <= 0
      ? run
      : withDeadline(run, timeoutMs, () => {
          abandon.abort();
          throw new ReconcileTimeoutError(timeoutMs);
        }));
    // Re-adds that were all the echo of this reconcile's own writes ask for nothing.
    if (a.echoes.onlyOwnEchoes(keyString)) a.queue.cancelReadd(keyString);
    a.terminal.succeeded(keyString);
    a.queue.forget(keyString);
    a.quietTimeouts.delete(keyString);
    const after = result?.requeueAfterMs;
    if (after !== undefined && after > 0) {
      a.queue.addAfter(keyString, after, result?.priority ?? "normal");
      a.rt.metrics.reconcileTotal.inc({ ...labels, result: "requeue_after" });
    } else {
      a.rt.metrics.reconcileTotal.inc({ ...labels, result: "success" });
    }
    log.debug({ requeueAfterMs: after }, "reconciled");
  } catch (err) {
    await reconcileFailed(a, keyString, err, ctx, written);
  } finally {
    a.rt.metrics.activeWorkers.dec(labels);
    a.rt.metrics.reconcileTime.observe(labels, (a.rt.clock.now().getTime() - started) / 1000);
  }
}

/** The parts of an object a reconcile acts on (not status): a change of any enqueues it. */
export function nonStatusFingerprint(obj: KubeObject): string {
  const m = obj.metadata ?? {};
  return JSON.stringify([m.generation, m.annotations, m.labels, m.deletionTimestamp, m.finalizers]);
}

/**
 * Keys held by a terminal error until their object changes ({@link nonStatusFingerprint});
 * one whose cause is outside the object is also retried on a slow backoff.
 */
export class TerminalHolds {
  /** Held key → its object's fingerprint when its reconcile failed. */
  private readonly held = new Map<string, string>();
  private readonly backoff: ExponentialBackoff;

  constructor(backoff: Partial<BackoffOptions> = {}) {
    this.backoff = new ExponentialBackoff({ ...DEFAULT_HOLD_BACKOFF, ...backoff });
  }

  keys(): string[] {
    return [...this.held.keys()];
  }

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

  /** Holds `key` with its object as it was; an external hold returns the slow retry's delay. */
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

/**
 * Which events of a controller's primary objects re-run their key: not a change of status
 * alone, nor the echo of this process's own write (its reconcile already acted). An echo
 * arriving before the write's answer re-adds the key; {@link onlyOwnEchoes} looks later.
 */
export class OwnWriteEchoFilter {
  /** Per key being reconciled: resourceVersions of updates that may echo its writes. */
  private readonly maybeEchoes = new Map<string, string[]>();
  /** Keys being reconciled that something other than a possible echo re-added. */
  private readonly rerun = new Set<string>();

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

  /** `ev` adds `key`: while it is reconciled, an update may echo a write not answered yet. */
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

  /** After a reconcile of `key`: true when all that re-added it meanwhile echoed its writes. */
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

  forget(key: string): void {
    this.maybeEchoes.delete(key);
    this.rerun.delete(key);
  }
}

function specChanged(ev: StoreEvent): boolean {
  return ev.old?.metadata?.generation !== ev.object.metadata?.generation;
}
