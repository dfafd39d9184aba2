/**
 * The condition reasons the operator writes: what each means, on which kinds and
 * condition types it appears, and what it says about the object's health. Each kind
 * declares the reasons only it writes in its own module (`ownReasons`, reasons/own.ts:
 * the `reasons` of its CrdDefinition); the rows several kinds write are the shared table
 * {@link CONDITION_REASONS}, which a kind gets by its group or joins (the `sharedReasons`
 * of its CrdDefinition). reason-table.ts gathers both for the registered kinds (`REASONS`
 * of src/crds/index.ts): the kstatus conditions (`Reconciling`, `Stalled`), the Argo CD
 * health scripts (scripts/generate-argocd.ts) and the reason table of
 * docs/conditions.md are all derived from it; nothing else decides whether a reason is
 * terminal.
 */

import { COMMON_REASONS, DELETION_POLICY_REASONS, TENANCY_REASONS } from "./reasons/common.js";
import { CONNECTION_REASONS } from "./reasons/connections.js";
import { joinReasonParts } from "./reasons/entry.js";
import { MANAGED_LOOP_REASONS } from "./reasons/managed-loop.js";
import type { OwnReason } from "./reasons/own.js";

export type { KindSet, ReasonEntry, ReasonState } from "./reasons/entry.js";
export {
  type OwnReason,
  type OwnReasonEntry,
  type OwnReasons,
  ownReason,
  ownReasons,
} from "./reasons/own.js";

/**
 * The shared reason table (see the module comment), joined from its per-area parts in
 * src/crds/reasons/ in the order of docs/conditions.md; a reason in two parts fails at
 * import.
 */
export const CONDITION_REASONS = joinReasonParts(
  COMMON_REASONS,
  TENANCY_REASONS,
  CONNECTION_REASONS,
  MANAGED_LOOP_REASONS,
  DELETION_POLICY_REASONS,
);

/** A reason of the shared table, {@link CONDITION_REASONS}. */
export type SharedReason = keyof typeof CONDITION_REASONS;

/** A condition reason the operator writes (PascalCase): a shared one or a kind's own. */
export type ConditionReason = SharedReason | OwnReason;
