/**
 * One reconcile of a key, within its deadline, and what its outcome does to the key.
 *
 * The deadline bounds how long one reconcile may hold a worker. In Node a worker is an
 * async task, so a reconcile waiting on hung reads costs no thread, but it holds one of
 * the controller's N workers: a few such keys would starve every other object. Past the
 * deadline the reconcile is abandoned: the worker takes the next key, this key is
 * retried with backoff, and the abandoned run is stopped where it can be. Its signal,
 * the reconcile's `ctx.signal`, aborts the service calls the reconcile makes, and its
 * `ctx.kube` and `ctx.events` (views for this reconcile: `KubeClient.forReconcile`)
 * send nothing more, so it cannot write state computed before the deadline over what a
 * newer reconcile saw. The same views charge the reconcile's flow (its key's,
 * workqueue.ts) with its Kubernetes requests.
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { ControllerDefinition, ReconcileContext } from "./controller.js";
import type { ControllerRuntime } from "./controller-runtime.js";
import {
  errorMessage,
  errorReason,
  isExternalHold,
  isTerminal,
  RetryableError,
  requeueAfterOf,
} from "./errors.js";
import type { OwnWriteEchoFilter, TerminalHolds } from "./reruns.js";
import { type ObjectKey, parseKey } from "./resource.js";
import type { WorkQueue } from "./workqueue.js";
import { ConflictError } from "./writes.js";

/** What one reconcile of a key needs of its running controller (controller-runner.ts). */
export interface ReconcileAttempt {
  readonly definition: ControllerDefinition;
  readonly rt: ControllerRuntime;
  readonly log: Logger;
  readonly queue: WorkQueue;
  /** Aborted when the controller stops past its drain bound. */
  readonly signal: AbortSignal;
  readonly terminal: TerminalHolds;
  readonly echoes: OwnWriteEchoFilter;
  /** Routine looks that reached the deadline in a row, by key ({@link quietTimeout}). */
  readonly quietTimeouts: Map<string, number>;
}

/** Deadlines in a row a look behind work reaches quietly before it fails as any reconcile. */
export const QUIET_ROUTINE_TIMEOUTS = 3;

/**
 * Reconciles `keyString` once, within the reconcile deadline, and applies the outcome:
 * a success forgets the key's backoff and requeues after `requeueAfterMs`; a failure
 * goes to {@link onFailure}. Metrics (active workers, totals, duration) are counted here.
 */
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
  a.rt.metrics.activeWorkers.inc(labels);
  try {
    // The reconcile gets its deadline as `ctx.signal`, and hands it to its service calls;
    // its Kubernetes requests and Events go through views made for it.
    const flow = a.queue.flowOfKeyNow(keyString) ?? "";
    const result = await runReconcile(a.rt.reconcileTimeoutMs ?? 0, ctx.signal, (signal) =>
      def.reconcile(key, {
        ...ctx,
        signal,
        kube: a.rt.kube.forReconcile({ flow, signal }),
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
    if (!quietTimeout(a, keyString, err)) await onFailure(a, keyString, key, err, ctx);
  } finally {
    a.rt.metrics.activeWorkers.dec(labels);
    a.rt.metrics.reconcileTime.observe(labels, (a.rt.clock.now().getTime() - started) / 1000);
  }
}

/**
 * A look that is not work (a key of the queue's low or deferred lane: a routine poll, a
 * follow-up) that reached the deadline has, most likely, waited for the routine budget
 * or behind work that goes first: it is looked at again in its lane one deadline later,
 * without an Event or a condition, up to {@link QUIET_ROUTINE_TIMEOUTS} times in a row;
 * then it fails as any reconcile. Whether it did so.
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
 * The error policy of a failed reconcile: a terminal error holds the key until its
 * object changes (or retries slowly when the cause is outside the object); any other
 * error is retried on the key's backoff, or when the error says. Then an Event on the
 * object and the controller's own `errorPolicy` (e.g. a Synced=False condition).
 */
async function onFailure(
  a: ReconcileAttempt,
  keyString: string,
  key: ObjectKey,
  err: unknown,
  ctx: ReconcileContext,
): Promise<void> {
  const { definition: def, queue } = a;
  const log = ctx.log;
  const labels = { controller: def.name };
  // As after a success: re-adds that were all the echo of this reconcile's own writes
  // (e.g. a create's pending marker written and removed around a refused call) ask for
  // nothing; the error's own policy says when to run again, not an immediate re-run
  // that would repeat the refused call.
  if (a.echoes.onlyOwnEchoes(keyString)) queue.cancelReadd(keyString);
  a.rt.metrics.reconcileTotal.inc({ ...labels, result: "error" });
  a.rt.metrics.reconcileErrors.inc(labels);
  const obj = a.rt.cache.get(def.primary, key);
  const reason = errorReason(err);
  if (isTerminal(err)) {
    a.rt.metrics.terminalReconcileErrors.inc(labels);
    queue.forget(keyString);
    const retryInMs = a.terminal.hold(keyString, obj, isExternalHold(err));
    if (retryInMs !== undefined) {
      // The far side may recover by itself (a key accepted again, an operation
      // back): look again on a slow backoff, besides any change of the object.
      queue.addAfter(keyString, retryInMs);
      log.warn(
        { err, reason, retryInMs },
        "reconcile failed terminally for a reason outside the object; retrying slowly",
      );
    } else {
      log.warn({ err, reason }, "reconcile failed terminally; waiting for a change of the object");
    }
  } else {
    // A failure that says when to retry (a saturated client-side rate limit) is
    // retried then, not on the key's backoff, which would spin while it waits.
    const asked = requeueAfterOf(err);
    if (asked !== undefined) queue.addAfter(keyString, asked);
    const retryInMs = asked ?? queue.addRateLimited(keyString);
    // A conflict only means the cache was behind the object (often our own last
    // write): the retry follows at once, so it is no warning, no Event and no
    // error-policy write (which would conflict the same way).
    if (err instanceof ConflictError) {
      log.debug({ err, reason, retryInMs }, "reconcile conflicted; will retry");
      return;
    }
    log.warn({ err, reason, retryInMs }, "reconcile failed; will retry");
  }
  if (obj) {
    // An expected wait (a referenced object on its way) is news, not a warning.
    if (err instanceof RetryableError && err.waiting) {
      a.rt.events.normal(obj, reason, errorMessage(err));
    } else {
      a.rt.events.warning(obj, reason, errorMessage(err));
    }
  }
  if (!def.errorPolicy) return;
  try {
    await def.errorPolicy(key, err, ctx);
  } catch (policyErr) {
    if (policyErr instanceof ConflictError) {
      // A retryable error is retried anyway; a terminal one would not be, and its
      // condition never written (the cache was behind the reconcile's own write, whose
      // echo is ignored): run once more when the cache has caught up.
      if (isTerminal(err)) queue.addRateLimited(keyString);
      log.debug({ err: policyErr }, "error policy conflicted; the retry records it");
    } else {
      log.error({ err: policyErr }, "error policy failed");
    }
  }
}

/** A reconcile ran past its deadline and was abandoned; its key is retried. */
export class ReconcileTimeoutError extends RetryableError {
  constructor(timeoutMs: number) {
    super(
      "ReconcileTimeout",
      `the reconcile took longer than ${timeoutMs} ms (reconcileTimeoutMs) and was abandoned; it is retried with backoff`,
    );
    this.name = "ReconcileTimeoutError";
  }
}

/**
 * Runs `fn` with a signal that aborts when `parent` does or `timeoutMs` passes (0: no
 * bound). Resolves or rejects as `fn` does, or rejects with
 * {@link ReconcileTimeoutError} at the deadline without waiting for `fn`.
 */
export async function runReconcile<T>(
  timeoutMs: number,
  parent: AbortSignal,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const abandon = new AbortController();
  const signal = AbortSignal.any([parent, abandon.signal]);
  const run = fn(signal);
  if (timeoutMs <= 0) return run;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      abandon.abort();
      reject(new ReconcileTimeoutError(timeoutMs));
    }, timeoutMs);
  });
  // The abandoned run's own end (often a ReconcileAbandonedError) is of no interest.
  run.catch(() => undefined);
  try {
    return await Promise.race([run, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
