/**
 * The status write that ends a live reconcile: Ready and Synced from the outcome, the
 * kind's own conditions, ReferencesResolved, DeletionPolicy and the kstatus
 * conditions, over the kind's status fields (or the previous ones, when the outcome
 * keeps them), patched only when something changed.
 */

import { REASONS } from "../../crds/index.js";
import {
  type ConditionInput,
  removeCondition,
  setCondition,
  withKstatusConditions,
} from "../../runtime/conditions.js";
import { patchStatus } from "../../runtime/writes.js";
import type { ManagedObject, ReferenceResolution } from "./call.js";
import { toKube } from "./call.js";
import type { Outcome } from "./outcome.js";
import { DELETION_POLICY_CONDITION, deletionPolicyVerdict } from "./policies.js";
import type { ManagedRun } from "./run.js";

/** Type of the condition of the reference step (run.ts, `resolveReferences`). */
export const REFERENCES_RESOLVED = "ReferencesResolved";

/** The ReferencesResolved condition of a resolution. */
export function referencesCondition(resolution: ReferenceResolution<unknown>): ConditionInput {
  return resolution.resolved
    ? { type: REFERENCES_RESOLVED, status: "True", reason: "Resolved", message: "" }
    : {
        type: REFERENCES_RESOLVED,
        status: "False",
        reason: resolution.reason,
        message: resolution.message,
      };
}

/**
 * The kind's status fields of `outcome`: from the remote record observed, or, when none
 * was and the kind names its fact fields, the previous status's other fields kept and
 * the fact fields written anew.
 */
function kindStatus<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  outcome: Outcome<R>,
): Record<string, unknown> {
  const { kind, obj } = run;
  if (outcome.remote !== undefined || !kind.factFields) {
    return kind.status(obj, outcome.facts, outcome.remote);
  }
  const kept: Record<string, unknown> = { ...(obj.status ?? {}) };
  for (const field of ["conditions", "observedGeneration", ...kind.factFields]) {
    delete kept[field];
  }
  return { ...kept, ...kind.status(obj, outcome.facts, undefined) };
}

/** Writes the status of `outcome` on the object of `run`; answers the status fields written. */
export async function writeStatus<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  outcome: Outcome<R>,
): Promise<Record<string, unknown>> {
  const { obj, ctx, kind } = run;
  const generation = obj.metadata?.generation;
  const now = ctx.clock.now();
  let conditions = setCondition(
    obj.status?.conditions,
    { type: "Ready", ...outcome.ready },
    generation,
    now,
  );
  conditions = setCondition(conditions, { type: "Synced", ...outcome.synced }, generation, now);
  const extra: (ConditionInput | { type: string; remove: true })[] =
    kind.conditions?.(run.call, outcome.ready, outcome.remote) ?? [];
  if (run.resolution) extra.push(referencesCondition(run.resolution));
  const policy = deletionPolicyVerdict(() => run.client, obj);
  if (policy.condition) extra.push(policy.condition);
  else conditions = removeCondition(conditions, DELETION_POLICY_CONDITION);
  for (const c of extra) {
    conditions =
      "remove" in c
        ? removeCondition(conditions, c.type)
        : setCondition(conditions, c, generation, now);
  }
  conditions = withKstatusConditions(conditions, REASONS, generation, now);
  const base = outcome.keepStatus ? { ...(obj.status ?? {}) } : kindStatus(run, outcome);
  await patchStatus(ctx.kube, kind.resource, toKube(obj), {
    ...base,
    ...lastHandled(run),
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    conditions,
  });
  if (policy.condition && policy.warn) {
    run.warning("DeletePolicyNotHonoured", policy.condition.message);
  }
  return base;
}

/** status.lastHandledReconcileAt: the request this reconcile handled, else the previous one. */
function lastHandled<T extends ManagedObject, R>(run: ManagedRun<T, R>) {
  const at = run.reconcileRequest ?? run.obj.status?.lastHandledReconcileAt;
  return at === undefined ? {} : { lastHandledReconcileAt: at };
}
