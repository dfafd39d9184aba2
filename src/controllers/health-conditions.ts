/**
 * The Synced condition of a failed reconcile, which every kind derives the same way
 * from the reason table of src/crds/reasons.ts. (The kstatus conditions every kind
 * writes come from `withKstatusConditions` of src/runtime/object-writes.ts, under that table.)
 */
import { REASONS } from "../crds/index.js";
import { errorReason, failureMessage, isTerminal } from "../runtime/errors.js";
import type { ConditionInput } from "../runtime/object-writes.js";

/**
 * The reason of a failure: the error's own reason when it is one of the reason table,
 * otherwise `ReconcileTerminal` or `ReconcileError` by the error's class (a Kubernetes
 * error's `Conflict`, say, is no condition reason of ours).
 */
export function failureReason(err: unknown): string {
  const own = errorReason(err, "");
  if (own && REASONS.has(own)) return own;
  return isTerminal(err) ? "ReconcileTerminal" : "ReconcileError";
}

/**
 * The Synced=False condition of a failed reconcile: {@link failureReason} and the
 * message with what the runtime does next (`failureMessage`).
 */
export function failedSyncCondition(err: unknown): ConditionInput {
  return {
    type: "Synced",
    status: "False",
    reason: failureReason(err),
    message: failureMessage(err),
  };
}
