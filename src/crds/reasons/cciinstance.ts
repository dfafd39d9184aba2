/**
 * The reasons only CciInstance writes (reasons.ts has the whole table).
 */
import { CCI, entry, type ReasonEntry } from "./entry.js";

/** CciInstance. */
export const CCI_INSTANCE_REASONS = {
  Running: entry("Ok", ["Ready"], CCI, "The instance is RUNNING."),
  Pending: entry("UnderWay", ["Ready"], CCI, "The instance is PENDING."),
  Releasing: entry("UnderWay", ["Ready"], CCI, "The instance is being released."),
  Stopped: entry(
    "Resting",
    ["Ready"],
    CCI,
    "The instance is STOPPED; the operator only observes it.",
    "Nothing, if it was stopped on purpose; start it in the service to have it RUNNING again.",
  ),
  StatusUnknown: entry("UnderWay", ["Ready"], CCI, "The service gave no status for the instance."),
  InstanceFailed: entry(
    "Terminal",
    ["Ready"],
    CCI,
    "The instance is in ERROR or FAILED; the message has the service's error description and suggestion.",
    "Follow the suggestion in the message, in the service; the object follows the instance's state.",
  ),
  NotBound: entry(
    "UnderWay",
    ["Ready"],
    CCI,
    "No instance is bound yet; the Bound condition says why.",
  ),
  Bound: entry("Ok", ["Bound"], CCI, "The object observes one instance."),
  NoMatchingInstance: entry(
    "UnderWay",
    ["Bound"],
    CCI,
    "No instance has spec.name; checked again every poll.",
  ),
  AmbiguousName: entry(
    "UnderWay",
    ["Bound"],
    CCI,
    "Several instances have spec.name; checked again every poll (or create a CciInstance with spec.instanceId).",
  ),
  InstanceNotFound: entry(
    "Terminal",
    ["Ready", "Bound"],
    CCI,
    "The bound instance does not exist (any more); the object stays bound to it.",
    "Delete the object (the operator never deletes instances).",
  ),
  Saved: entry("Ok", ["ImagesSaved"], CCI, "Every image of spec.images is saved."),
  Saving: entry("UnderWay", ["ImagesSaved"], CCI, "Images of spec.images are being saved."),
  SaveRetrying: entry(
    "UnderWay",
    ["ImagesSaved"],
    CCI,
    "An image save failed and is tried again after a backoff.",
  ),
  SaveOutcomeUnknown: entry(
    "Terminal",
    ["ImagesSaved"],
    CCI,
    "An image save may or may not have happened; it is not retried.",
    "Check the service, then remove the entry from spec.images and add it back.",
  ),
} as const satisfies Record<string, ReasonEntry>;
