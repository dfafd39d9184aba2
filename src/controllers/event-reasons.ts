/**
 * The reasons of the Kubernetes Events the controllers record: every condition reason
 * (src/crds/reasons.ts, e.g. a Warning `CreateFailed` beside the condition), and the
 * reasons that name an action rather than a state, listed here.
 */
import type { ConditionReason } from "../crds/reasons.js";

/** Event reasons that are no condition reason: what a reconcile did. */
export const ACTION_REASONS = [
  "CreateRequested",
  "Created",
  "Adopted",
  "Recovered",
  "Updated",
  "Deleted",
  "Orphaned",
  "DeletePolicyNotHonoured",
  "ObjectsDeleted",
  "DriftCorrected",
  "Bound",
  "StatusChanged",
  "InstanceFailed",
  "InstanceKept",
  "ImageSaveRequested",
  "ImageSaved",
] as const;

/** The reason of an Event the controllers record. */
export type EventReason = ConditionReason | (typeof ACTION_REASONS)[number];
