/**
 * The reasons the controllers give, typed: of the Kubernetes Events they record (every
 * condition reason of src/crds/reasons.ts, e.g. a Warning `CreateFailed` beside the
 * condition, and the reasons that name an action rather than a state, listed here),
 * and of the errors they throw (condition reasons: the Synced condition shows them).
 */
import type { ConditionReason } from "../crds/reasons.js";
import { type ReconcileErrorOptions, RetryableError, TerminalError } from "../runtime/errors.js";
import type { EventRecorder } from "../runtime/events.js";
import type { KubeObject } from "../runtime/resource.js";

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
  "LateInitialized",
  "CreateRepeated",
  "Bound",
  "StatusChanged",
  "InstanceFailed",
  "InstanceKept",
  "ImageSaveRequested",
  "ImageSaved",
  "ImageSaveFailed",
  "ImageSaveOutcomeUnknown",
  "ExposureUpdated",
  "ConnectionDetailsExported",
  "ConnectionDetailsConflict",
] as const;

/** The reason of an Event the controllers record. */
export type EventReason = ConditionReason | (typeof ACTION_REASONS)[number];

/** Records Events on objects with a reason of {@link EventReason} (over the runtime's recorder). */
export function reasonEvents(events: EventRecorder) {
  return {
    normal: (obj: KubeObject, reason: EventReason, note: string) =>
      events.normal(obj, reason, note),
    warning: (obj: KubeObject, reason: EventReason, note: string) =>
      events.warning(obj, reason, note),
  };
}

/** A {@link TerminalError} whose reason is a condition reason (retrying cannot help). */
export function terminalError(
  reason: ConditionReason,
  message: string,
  options?: ReconcileErrorOptions,
): TerminalError {
  return new TerminalError(reason, message, options);
}

/** A {@link RetryableError} whose reason is a condition reason (retried with backoff). */
export function retryableError(
  reason: ConditionReason,
  message: string,
  options?: ReconcileErrorOptions,
): RetryableError {
  return new RetryableError(reason, message, options);
}
