/**
 * The reasons of the generic managed loop (reasons.ts has the whole table), and the
 * rows of a remote resource's state and of referenced objects that several kinds write:
 * those name no kind, a kind joins them with the `sharedReasons` of its CrdDefinition.
 */
import {
  EVERY,
  entry,
  JOINED,
  MANAGED,
  REFERENCE,
  REFERENCE_NOT_READY_ACTION,
  REFUSAL,
  type ReasonEntry,
  readEveryPoll,
} from "./entry.js";

/** The generic managed loop, and the rows kinds join. */
export const MANAGED_LOOP_REASONS = {
  Available: entry("Ok", ["Ready"], JOINED, "The remote resource exists and is usable."),
  Unavailable: entry(
    "UnderWay",
    ["Ready"],
    JOINED,
    "The remote resource exists but is in a state that is not usable yet.",
  ),
  Resolved: entry(
    "Ok",
    ["ReferencesResolved"],
    JOINED,
    "Every referenced object is ready (the loop's reference step; for a TrainingJob also once its task exists, which no longer depends on them).",
  ),
  SourceJobNotReady: entry(
    "UnderWay",
    REFERENCE,
    JOINED,
    "The referenced TrainingJob has no task id yet; the object waits for it.",
    REFERENCE_NOT_READY_ACTION,
  ),
  NasVolumeNotReady: entry(
    "UnderWay",
    REFERENCE,
    JOINED,
    "A NasVolume in storage[].nasVolumeRef is not Ready yet; the object waits for it.",
    REFERENCE_NOT_READY_ACTION,
  ),
  Creating: entry(
    "UnderWay",
    ["Ready"],
    MANAGED,
    "The remote resource is being created (subscription pending, or a create's outcome is being looked up).",
  ),
  Updating: entry(
    "UnderWay",
    ["Synced"],
    MANAGED,
    "A change of the spec was sent and does not show yet, or waits to be sent (e.g. for an earlier change to show).",
  ),
  Deleting: entry(
    "UnderWay",
    ["Ready"],
    MANAGED,
    "The object is being deleted (deletionPolicy Delete) and the operator waits: for a create in flight to resolve, for the kind's steps before deletion (e.g. a detach), or, after a delete, until the service no longer shows the resource (a delete it refuses is sent again meanwhile). The finalizer stays until then; the message says what is awaited.",
  ),
  CreateFailed: entry(
    "Terminal",
    ["Ready"],
    MANAGED,
    "The service refused the order (the subscription failed); the message has its reason.",
    "Change the spec: a new generation is ordered again.",
  ),
  CreateOutcomePending: entry(
    "UnderWay",
    ["Synced"],
    MANAGED,
    "A create's answer was lost (an error, a timeout, a reset) and the operator looks its resource up by its client token until the time the message gives: service.listVisibilityWindowMs after the create can no longer take effect (service.timeoutMs after its call ended, or, where the process that sent it stopped, reconcileTimeoutMs + service.timeoutMs after it was recorded); then, where two complete listings in a row prove it absent, it creates again once with a new token (service.recreateLostCreates).",
  ),
  CreateOutcomeUnknown: entry(
    "Terminal",
    REFUSAL,
    MANAGED,
    "A create may or may not have happened and the operator cannot tell. An object deleted under deletionPolicy Delete keeps its finalizer meanwhile, so that nothing the create made is left behind.",
    "Set the annotation aidc.io/external-id to the resource's id (deleted then, if the object is being deleted), or remove aidc.io/create-pending to create it anew; on a deleted object, set spec.deletionPolicy to Orphan to leave the service as it is.",
  ),
  RemoteNotFound: {
    ...entry(
      "Terminal",
      ["Ready"],
      MANAGED,
      "The bound remote resource does not exist (deleted outside the cluster, or an adopted id that never existed), or the object has no remote resource and spec.managementPolicies has no Create.",
      "The message says how to bind the object anew: remove the aidc.io/external-id annotation with the create's records beside it (aidc.io/subscription-key, aidc.io/create-pending, which would bind the same id again; the message gives the command), or, for an id in the spec (which cannot change), delete the object and create a new one; without Create, set the kind's id field or aidc.io/external-id to an existing resource, or add Create.",
    ),
    operator:
      "For a bound id: reads it again on every poll (Stalled=True meanwhile), so a resource that shows again clears the condition. Without an id and without Create: waits for a change of the object.",
  },
  ReconcilePaused: {
    ...entry(
      "Resting",
      ["Ready", "Synced"],
      EVERY,
      'The annotation aidc.io/paused is "true": the operator neither calls the service for the object nor changes it (a deletion waits too where a finalizer holds it: not that of a CciInstance, whose instance is kept anyway, or of an unused ServiceConnection). A paused ServiceConnection is not checked, but the objects using it go on using it (pause them too). kstatus reads Ready as before the pause, and an object paused before it had a Ready gets Ready=False (kstatus InProgress, not Current); Argo CD shows Suspended, or Degraded while Ready keeps a terminal reason.',
      "Remove the annotation aidc.io/paused (or set it to anything but true) to resume at once.",
    ),
    operator:
      "Sends nothing to the service and writes nothing but this condition (on Ready only when the object has none yet): no poll, no change, no deletion, until the annotation goes; then it reconciles the object at once. A CciInstance's deletion is not held (it has no finalizer).",
  },
  FixedFieldsDiffer: readEveryPoll(
    entry(
      "Terminal",
      ["Synced"],
      MANAGED,
      "The object adopts a remote resource (by the id in its spec, storageId, volumeId…, or by the annotation aidc.io/external-id on a resource the operator did not create for it) whose fields that cannot change differ from the spec, or whose spec's id, set after it was bound, names another resource (the message names them with both values): the spec misdescribes the resource, and neither side can be changed. Nothing else of the resource is changed meanwhile (the spec may name another one than meant).",
      "Delete the object (with deletionPolicy Orphan the resource stays) and create one whose spec has the resource's values (the message and status show them).",
    ),
  ),
  DriftDetected: readEveryPoll(
    entry(
      "Terminal",
      ["Synced"],
      MANAGED,
      "The remote resource differs from the spec (the message names the fields) and spec.managementPolicies has no Update, so the operator does not change it.",
      "Change the spec to match the remote resource, or add Update to spec.managementPolicies to let the operator correct it.",
    ),
  ),
} as const satisfies Record<string, ReasonEntry>;
