/**
 * One reconcile of a key within its deadline, and what its outcome does to the key. Past
 * the deadline (which keeps a few hung keys from holding every worker) the reconcile is
 * abandoned: its `ctx.signal` aborts its service calls and its `ctx.kube` and `ctx.events`
 * (views of `KubeClient.forReconcile`) send nothing more, so it cannot write stale state.
 */
import { randomUUID } from "node:crypto";
import type { ReconcileContext } from "./controller.js";
import { DEFAULT_HOLD_BACKOFF } from "./defaults.js";
import { ReconcileTimeoutError } from "./errors.js";
import { type BackoffOptions, ExponentialBackoff } from "./fair-lanes.js";
import { type FailedAttempt, reconcileFailed } from "./reconcile-failure.js";
import { type KubeObject, parseKey, withDeadline } from "./resource.js";

/** What one reconcile of a key needs of its running controller (controller-runner.ts). */
export interface ReconcileAttempt extends FailedAttempt {
  readonly terminal: TerminalHolds;
}

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
    const result = await runReconcile(a.rt.reconcileTimeoutMs ?? 0, ctx.signal, (signal) =>
      def.reconcile(key, {
        ...ctx,
        signal,
        kube: a.rt.kube.forReconcile({ flow, signal, written }),
        events: a.rt.events.forReconcile({ flow, signal }),
      }),
    );
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
 * The keys of one controller held by a terminal error until their object changes
 * ({@link nonStatusFingerprint}); when the cause is outside the object, also after a slow backoff.
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

/** Runs `fn` with a signal aborted with `parent` or at `timeoutMs` (0: none), then rejecting. */
export async function runReconcile<T>(
  timeoutMs: number,
  parent: AbortSignal,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const abandon = new AbortController();
  const signal = AbortSignal.any([parent, abandon.signal]);
  const run = fn(signal);
  if (timeoutMs <= 0) return run;
  // At the deadline the run is abandoned; its own end (often ReconcileAbandonedError) is ignored.
  return withDeadline(run, timeoutMs, () => {
    abandon.abort();
    throw new ReconcileTimeoutError(timeoutMs);
  });
}
