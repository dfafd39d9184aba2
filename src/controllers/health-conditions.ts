/**
 * The conditions every kind derives the same way from the reason table of
 * src/crds/reasons.ts: the kstatus conditions (`Reconciling`, `Stalled`) and the
 * Synced condition of a failed reconcile.
 */
import { KSTATUS_TYPES, kstatusCondition, REASONS } from "../crds/index.js";
import {
  type Condition,
  type ConditionInput,
  removeCondition,
  setCondition,
} from "../runtime/conditions.js";
import { errorMessage, errorReason, isTerminal } from "../runtime/errors.js";

/**
 * Returns `conditions` with Reconciling or Stalled set as the others imply (see
 * src/crds/reason-table.ts), and the one not implied removed. Call it last, on the list
 * that is written.
 */
export function withKstatusConditions(
  conditions: readonly Condition[] | undefined,
  generation: number | undefined,
  now: Date,
): Condition[] {
  const implied = kstatusCondition(conditions ?? [], REASONS);
  let list = [...(conditions ?? [])];
  for (const type of KSTATUS_TYPES) {
    if (implied?.type !== type) list = removeCondition(list, type);
  }
  return implied ? setCondition(list, implied, generation, now) : list;
}

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

/** The Synced=False condition of a failed reconcile: {@link failureReason} and the message. */
export function failedSyncCondition(err: unknown): ConditionInput {
  return {
    type: "Synced",
    status: "False",
    reason: failureReason(err),
    message: errorMessage(err),
  };
}
