/** The condition reasons only CciInstance writes: the `reasons` of its CrdDefinition (cciinstance.ts). */
import { ownReason, ownReasons, readEveryPoll } from "./reasons/own.js";

/** The condition reasons only CciInstance writes (reasons.ts has the shared ones). */
export const CCI_INSTANCE_REASONS = ownReasons({
  Running: ownReason("Ok", ["Ready"], "The instance is RUNNING."),
  Pending: ownReason("UnderWay", ["Ready"], "The instance is PENDING."),
  Releasing: ownReason("UnderWay", ["Ready"], "The instance is being released."),
  Stopped: ownReason(
    "Resting",
    ["Ready"],
    "The instance is STOPPED; the operator only observes it.",
    "Nothing, if it was stopped on purpose; start it in the service to have it RUNNING again.",
  ),
  StatusUnknown: ownReason("UnderWay", ["Ready"], "The service gave no status for the instance."),
  InstanceFailed: readEveryPoll(
    ownReason(
      "Terminal",
      ["Ready"],
      "The instance is in ERROR or FAILED; the message has the service's error description and suggestion.",
      "Follow the suggestion in the message, in the service; the object follows the instance's state.",
    ),
  ),
  NotBound: ownReason(
    "UnderWay",
    ["Ready"],
    "No instance is bound yet; the Bound condition says why.",
  ),
  Bound: ownReason("Ok", ["Bound"], "The object observes one instance."),
  NoMatchingInstance: ownReason(
    "UnderWay",
    ["Bound"],
    "No instance has spec.name; checked again every poll.",
  ),
  AmbiguousName: ownReason(
    "UnderWay",
    ["Bound"],
    "Several instances have spec.name; checked again every poll (or create a CciInstance with spec.instanceId).",
  ),
  InstanceNotFound: ownReason(
    "Terminal",
    ["Ready", "Bound"],
    "The bound instance does not exist (any more); the object stays bound to it.",
    "Delete the object (the operator never deletes instances).",
  ),
  Saved: ownReason("Ok", ["ImagesSaved"], "Every image of spec.images is saved."),
  Saving: ownReason("UnderWay", ["ImagesSaved"], "Images of spec.images are being saved."),
  SaveRetrying: ownReason(
    "UnderWay",
    ["ImagesSaved"],
    "An image save failed and is tried again after a backoff.",
  ),
  SaveOutcomeUnknown: ownReason(
    "Terminal",
    ["ImagesSaved"],
    "An image save may or may not have happened; it is not retried.",
    "Check the service, then remove the entry from spec.images and add it back.",
  ),
});
