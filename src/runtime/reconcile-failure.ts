/**
 * What a reconcile that threw does to its key (controller-keys.ts calls here): nothing
 * when the controller aborted it, a terminal error holds it, any other retries it, and a
 * look behind work that reached its deadline looks again quietly.
 */
import type { Logger } from "pino";
import type { ControllerDefinition, ReconcileContext } from "./controller.js";
import type { ControllerRuntime } from "./controller-runtime.js";
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
import { writtenKey } from "./kube.js";
import { isKubeUnreachable } from "./kube-unreachable.js";
import type { KubeObject } from "./resource.js";
import type { WorkQueue } from "./workqueue.js";

/** What the failure policy needs of a reconcile's attempt (controller-keys.ts). */
export interface FailedAttempt {
  readonly definition: ControllerDefinition;
  readonly rt: ControllerRuntime;
  readonly log: Logger;
  readonly queue: WorkQueue;
  /** Holds a key after a terminal error (controller-keys.ts's TerminalHolds). */
  readonly terminal: {
    hold(key: string, obj: KubeObject | undefined, external: boolean): number | undefined;
  };
  /** Whether all that re-added a key during its reconcile echoed its own writes. */
  readonly echoes: { onlyOwnEchoes(key: string): boolean };
  /** Routine looks that reached the deadline in a row, by key ({@link quietTimeout}). */
  readonly quietTimeouts: Map<string, number>;
  /** Aborted when the controller stops past its drain bound. */
  readonly signal: AbortSignal;
}

/**
 * A reconcile of `keyString` that threw. Aborted by the controller's stop or a lost
 * leadership, it is not the object's failure: no Event, condition or backoff; whoever leads
 * next reconciles it. `written`: the reconcile's own writes (`KubeClient.forReconcile`).
 */
export async function reconcileFailed(
  a: FailedAttempt,
  keyString: string,
  err: unknown,
  ctx: ReconcileContext,
  written: ReadonlyMap<string, KubeObject>,
): Promise<void> {
  if (a.signal.aborted) {
    ctx.log.debug({ err }, "reconcile aborted: the controller is stopping");
    return;
  }
  if (quietTimeout(a, keyString, err)) return;
  // The reconcile's own last write of the object is newer than a cache behind it.
  const { primary } = a.definition;
  const cached = a.rt.cache.get(primary, ctx.key);
  const obj = cached && (written.get(writtenKey(primary, ctx.key)) ?? cached);
  await onFailure(a, keyString, err, ctx, obj);
}

/** Deadlines in a row a look behind work reaches quietly before it fails as any reconcile. */
export const QUIET_ROUTINE_TIMEOUTS = 3;

/**
 * Whether a look behind work (low or deferred lane) reached the deadline quietly: it most
 * likely waited behind work, so it looks again in its lane one deadline later, without
 * Event or condition, {@link QUIET_ROUTINE_TIMEOUTS} times in a row at most.
 */
function quietTimeout(a: FailedAttempt, keyString: string, err: unknown): boolean {
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
 * A failed reconcile: a terminal error holds the key, any other is retried; then an Event
 * and the controller's `errorPolicy` (e.g. Synced=False) on `obj`.
 */
async function onFailure(
  a: FailedAttempt,
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
    } else if (isKubeUnreachable(policyErr)) {
      // The API server did not answer its write: the line above and the cache say so.
      log.debug({ err: policyErr }, "error policy got no answer; the retry records it");
    } else {
      log.warn({ err: policyErr }, "error policy failed; the retry records it");
    }
  }
}
