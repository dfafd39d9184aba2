/**
 * Every condition reason the operator writes, in one table: what it means, on which
 * kinds and condition types it appears, and what it says about the object's health.
 * The kstatus conditions (`Reconciling`, `Stalled`), the Argo CD health scripts'
 * terminal lists (scripts/generate-argocd.ts) and the reason table of
 * docs/conditions.md are all derived from {@link CONDITION_REASONS}; nothing else
 * decides whether a reason is terminal.
 */

import { CCI_INSTANCE_REASONS } from "./reasons/cciinstance.js";
import { COMMON_REASONS, DELETION_POLICY_REASONS, TENANCY_REASONS } from "./reasons/common.js";
import { CONNECTION_REASONS } from "./reasons/connections.js";
import { joinReasonParts, type ReasonEntry } from "./reasons/entry.js";
import { MANAGED_LOOP_REASONS } from "./reasons/managed-loop.js";
import { NAS_VOLUME_REASONS } from "./reasons/nasvolume.js";
import { TRAINING_JOB_REASONS } from "./reasons/trainingjob.js";
import { TRAINING_TEMPLATE_REASONS } from "./reasons/trainingtemplate.js";

export type { KindName, ReasonEntry, ReasonState } from "./reasons/entry.js";

/**
 * The reason table (see the module comment), joined from its per-area parts in
 * src/crds/reasons/ in the order of docs/conditions.md; a reason in two parts fails at
 * import.
 */
export const CONDITION_REASONS = joinReasonParts(
  COMMON_REASONS,
  TENANCY_REASONS,
  CONNECTION_REASONS,
  MANAGED_LOOP_REASONS,
  TRAINING_JOB_REASONS,
  NAS_VOLUME_REASONS,
  TRAINING_TEMPLATE_REASONS,
  CCI_INSTANCE_REASONS,
  DELETION_POLICY_REASONS,
);

/** A condition reason the operator writes (PascalCase). */
export type ConditionReason = keyof typeof CONDITION_REASONS;

/** The entry of `reason`, or undefined for a string that is not one of ours. */
export function reasonEntry(reason: string): ReasonEntry | undefined {
  return Object.hasOwn(CONDITION_REASONS, reason)
    ? CONDITION_REASONS[reason as ConditionReason]
    : undefined;
}

/** True when `reason` is one of the operator's reasons. */
export function isConditionReason(reason: string): reason is ConditionReason {
  return reasonEntry(reason) !== undefined;
}

/** True when `reason` is Terminal: retrying will not help, a person must act. */
export function isTerminalReason(reason: string): boolean {
  return reasonEntry(reason)?.state === "Terminal";
}

/** The Terminal reasons a kind writes, sorted (the Argo CD scripts' list). */
export function terminalReasonsOf(kind: string): ConditionReason[] {
  return (Object.keys(CONDITION_REASONS) as ConditionReason[])
    .filter((r) => {
      const e: ReasonEntry = CONDITION_REASONS[r];
      return e.state === "Terminal" && (e.kinds as readonly string[]).includes(kind);
    })
    .sort();
}
