/**
 * The condition reasons the operator writes: what each means, on which kinds and
 * condition types it appears, and what it says about the object's health. The shared
 * table is {@link CONDITION_REASONS} (the reasons every kind or several write, and those
 * of the first kinds); a kind may declare the reasons only it writes in its own module
 * (`ownReasons`, reasons/own.ts). reason-table.ts gathers both for the registered kinds
 * (`REASONS` of src/crds/index.ts): the kstatus conditions (`Reconciling`, `Stalled`),
 * the Argo CD health scripts (scripts/generate-argocd.ts) and the reason table of
 * docs/conditions.md are all derived from it; nothing else decides whether a reason is
 * terminal.
 */

import { CCI_INSTANCE_REASONS } from "./reasons/cciinstance.js";
import { COMMON_REASONS, DELETION_POLICY_REASONS, TENANCY_REASONS } from "./reasons/common.js";
import { CONNECTION_REASONS } from "./reasons/connections.js";
import { joinReasonParts } from "./reasons/entry.js";
import { MANAGED_LOOP_REASONS } from "./reasons/managed-loop.js";
import { NAS_VOLUME_REASONS } from "./reasons/nasvolume.js";
import type { OwnReason } from "./reasons/own.js";
import { TRAINING_JOB_REASONS } from "./reasons/trainingjob.js";
import { TRAINING_TEMPLATE_REASONS } from "./reasons/trainingtemplate.js";

export type { KindSet, ReasonEntry, ReasonState } from "./reasons/entry.js";
export {
  type OwnReason,
  type OwnReasonEntry,
  type OwnReasons,
  ownReason,
  ownReasons,
} from "./reasons/own.js";

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

/** A reason of the shared table, {@link CONDITION_REASONS}. */
export type SharedReason = keyof typeof CONDITION_REASONS;

/** A condition reason the operator writes (PascalCase): a shared one or a kind's own. */
export type ConditionReason = SharedReason | OwnReason;
