/**
 * What a CciInstance reconcile tells besides its status: the Bound condition of a
 * binding, and the events of a change (a failure, a remote status change, a saved
 * image).
 */
import type { CciInstanceStatus } from "../../crds/cciinstance.js";
import type { ConditionInput, EventRecorder } from "../../runtime/index.js";
import { reasonEvents } from "../event-reasons.js";
import type { Binding } from "./binding.js";
import { imageKey } from "./images.js";
import type { CciObject } from "./objects.js";
import { errorKey } from "./status.js";

/** The Bound condition of `binding`. */
export function boundCondition(binding: Binding): ConditionInput {
  return binding.bound
    ? {
        type: "Bound",
        status: "True",
        reason: "Bound",
        message: `bound to CCI instance ${binding.instanceId} by ${binding.via}`,
      }
    : { type: "Bound", status: "False", reason: binding.reason, message: binding.message };
}

/** The events of the change from `before` to `after`. */
export function announceChanges(
  recorder: EventRecorder,
  obj: CciObject,
  before: CciInstanceStatus | undefined,
  after: CciInstanceStatus,
): void {
  const events = reasonEvents(recorder);
  const errKey = errorKey(after.error);
  if (errKey && errKey !== errorKey(before?.error)) {
    const e = after.error;
    const text = [e?.description, e?.suggestion && `suggestion: ${e.suggestion}`, e?.detail]
      .filter(Boolean)
      .join("; ");
    events.warning(
      obj,
      "InstanceFailed",
      `CCI instance ${after.instanceId} is ${after.remoteStatus}: ${text}`,
    );
  }
  if (before?.remoteStatus && before.remoteStatus !== after.remoteStatus) {
    events.normal(
      obj,
      "StatusChanged",
      `CCI instance ${after.instanceId}: ${before.remoteStatus} → ${after.remoteStatus}`,
    );
  }
  const was = new Map((before?.images ?? []).map((i) => [imageKey(i), i.state]));
  for (const image of after.images ?? []) {
    if (image.state === "Saved" && was.get(imageKey(image)) !== "Saved") {
      events.normal(obj, "ImageSaved", `image ${imageKey(image)} saved as ${image.imageId ?? "?"}`);
    }
  }
}
