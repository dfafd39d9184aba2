/**
 * One reconcile of a key within its deadline, and what its outcome does to the key. Past
 * the deadline (which keeps a few hung keys from holding every worker) the reconcile is
 * abandoned: its `ctx.signal` aborts its service calls and its `ctx.kube` and `ctx.events`
 * (views of `KubeClient.forReconcile`) send nothing more, so it cannot write stale state.
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { ControllerDefinition, ReconcileContext } from "./controller.js";
import type { ControllerRuntime } from "./controller-runtime.js";
import { DEFAULT_HOLD_BACKOFF } from "./defaults.js";
import {
  ConflictError,
  errorReason,
  failureMessage,
  isExternalHold,
  isTerminal,
  ReconcileTimeoutError,
  RetryableError,
  requeueAfterOf,
} from "./errors.js";
import { type BackoffOptions, ExponentialBackoff } from "./fair-lanes.js";
import { writtenKey } from "./kube.js";
import { type KubeObject, parseKey, withDeadline } from "./resource.js";
import type { WorkQueue } from "./workqueue.js";

/** What one reconcile of a key needs of its running controller (controller-runner.ts). */
export interface ReconcileAttempt {
  readonly definition: ControllerDefinition;
  readonly rt: ControllerRuntime;
  readonly log: Logger;
  readonly queue: WorkQueue;
  /** Aborted when the controller stops past its drain bound. */
  readonly signal: AbortSignal;
  readonly terminal: TerminalHolds;
  /** Whether all that re-added a key during its reconcile echoed its own writes. */
  readonly echoes: { onlyOwnEchoes(key: string): boolean };
  /** Routine looks that reached the deadline in a row, by key ({@link quietTimeout}). */
  readonly quietTimeouts: Map<string, number>;
}

/** Deadlines in a row a look behind work reaches quietly before it fails as any reconcile. */
export const QUIET_ROUTINE_TIMEOUTS = 3;

/** Reconciles `keyString` once; a success forgets its backoff, a failure goes to onFailure. */
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
    // Aborted by the controller's stop or a lost leadership: not the object's failure, so
    // no Event, condition or backoff; whoever leads next reconciles it.
    if (a.signal.aborted) log.debug({ err }, "reconcile aborted: the controller is stopping");
    else if (!quietTimeout(a, keyString, err)) {
      // The reconcile's own last write of the object is newer than a cache behind it.
      const cached = a.rt.cache.get(def.primary, key);
      const obj = cached && (written.get(writtenKey(def.primary, key)) ?? cached);
      await onFailure(a, keyString, err, ctx, obj);
    }
  } finally {
    a.rt.metrics.activeWorkers.dec(labels);
    a.rt.metrics.reconcileTime.observe(labels, (a.rt.clock.now().getTime() - started) / 1000);
  }
}

/**
 * Whether a look behind work (low or deferred lane) reached the deadline quietly: it most
 * likely waited behind work, so it looks again in its lane one deadline later, without
 * Event or condition, {@link QUIET_ROUTINE_TIMEOUTS} times in a row at most.
 */
function quietTimeout(a: ReconcileAttempt, keyString: string, err: unknown): boolean {
  const lane = a.queue.priorityOf(keyString);
  if (!(err instanceof ReconcileTimeoutError) || lane === undefined || lane === "normal") {
    return false;
  }
  const inRow = (a.quietTimeouts.get(keyString) ?? 0) + 1;
  if (inRow > QUIET_ROUTINE_TIMEOUTS) {
    a.quietTimeouts.delete(keyString);
    return false;
  }
  a.quietTimeouts.set(keyString, inRow);
  a.rt.metrics.reconcileTotal.inc({ controller: a.definition.name, result: "error" });
  a.queue.addAfter(keyString, Math.max(1_000, a.rt.reconcileTimeoutMs ?? 0), lane);
  a.log.debug(
    { key: keyString, inRow },
    "look behind work reached its deadline; looking again later",
  );
  return true;
}

/**
 * A failed reconcile: a terminal error holds the key ({@link TerminalHolds}), any other is
 * retried; then an Event and the controller's `errorPolicy` (e.g. Synced=False) on `obj`.
 */
async function onFailure(
  a: ReconcileAttempt,
  keyString: string,
  err: unknown,
  ctx: ReconcileContext,
  obj: KubeObject | undefined,
): Promise<void> {
  const { definition: def, queue } = a;
  const log = ctx.log;
  const labels = { controller: def.name };
  // As after a success: the error's policy says when to run again, not an immediate
  // re-run for the echo of its own writes, which would repeat a refused call.
  if (a.echoes.onlyOwnEchoes(keyString)) queue.cancelReadd(keyString);
  a.rt.metrics.reconcileTotal.inc({ ...labels, result: "error" });
  a.rt.metrics.reconcileErrors.inc(labels);
  const reason = errorReason(err);
  if (isTerminal(err)) {
    a.rt.metrics.terminalReconcileErrors.inc(labels);
    queue.forget(keyString);
    const retryInMs = a.terminal.hold(keyString, obj, isExternalHold(err));
    if (retryInMs !== undefined) {
      // The far side may recover by itself (a key accepted again): look again slowly.
      queue.addAfter(keyString, retryInMs);
      log.warn(
        { err, reason, retryInMs },
        "reconcile failed terminally for a reason outside the object; retrying slowly",
      );
    } else {
      log.warn({ err, reason }, "reconcile failed terminally; waiting for a change of the object");
    }
  } else {
    // A failure that says when (a saturated client-side rate limit) is retried then:
    // the key's backoff would spin while it waits.
    const asked = requeueAfterOf(err);
    if (asked !== undefined) queue.addAfter(keyString, asked);
    const retryInMs = asked ?? queue.addRateLimited(keyString);
    // A conflict only means the cache was behind (often our own last write): no warning,
    // Event or error-policy write (it would conflict the same way) before the retry.
    if (err instanceof ConflictError) {
      log.debug({ err, reason, retryInMs }, "reconcile conflicted; will retry");
      return;
    }
    log.warn({ err, reason, retryInMs }, "reconcile failed; will retry");
  }
  if (obj) {
    // An expected wait (a referenced object on its way) is news, not a warning.
    if (err instanceof RetryableError && err.waiting) {
      a.rt.events.normal(obj, reason, failureMessage(err));
    } else {
      a.rt.events.warning(obj, reason, failureMessage(err));
    }
  }
  if (!def.errorPolicy) return;
  try {
    await def.errorPolicy(ctx.key, err, ctx, obj);
  } catch (policyErr) {
    // A terminal error is not retried, so its condition would never be written: run once
    // more, after a conflict when the cache has caught up, else on the growing backoff.
    if (isTerminal(err)) queue.addRateLimited(keyString);
    if (policyErr instanceof ConflictError) {
      log.debug({ err: policyErr }, "error policy conflicted; the retry records it");
    } else {
      log.warn({ err: policyErr }, "error policy failed; the retry records it");
    }
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
