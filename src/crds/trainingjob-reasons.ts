/** The condition reasons only TrainingJob writes: the `reasons` of its CrdDefinition (trainingjob.ts). */
import {
  ownReason,
  ownReasons,
  REFERENCE,
  REFERENCE_NOT_READY_ACTION,
  readEveryPoll,
  referenceWait,
} from "./reasons/own.js";

/** The condition reasons only TrainingJob writes (reasons.ts has the shared ones). */
export const TRAINING_JOB_REASONS = ownReasons({
  TaskRunning: ownReason("Ok", ["Ready"], "The task is running."),
  TaskSucceeded: ownReason(
    "Ok",
    ["Ready", "Succeeded"],
    "The task finished successfully: Ready=True (the task did what was asked) and Succeeded=True.",
  ),
  TaskStarting: ownReason("UnderWay", ["Ready"], "The task is queued or starting."),
  TaskFailed: readEveryPoll(
    ownReason(
      "Terminal",
      ["Ready"],
      "The task failed in the service; the message has the last execution record.",
      "Create a new TrainingJob to run it again.",
    ),
  ),
  TaskStopped: ownReason(
    "Resting",
    ["Ready"],
    "The task was stopped in the service; nothing is under way.",
    "Nothing, if you stopped it. To run it again, create a new TrainingJob (a task cannot be restarted through the operator).",
  ),
  UnknownTaskStatus: ownReason(
    "UnderWay",
    ["Ready"],
    "The service reports a task status the operator does not know; map it in the operator configuration (trainingJob.statusClasses).",
  ),
  MissingFieldsInvalidSpec: ownReason(
    "Terminal",
    ["Ready", "Synced"],
    "Fields the create needs are neither in the spec nor in the template or source job; nothing is ordered.",
    "Add the fields the message names to the spec (or to the template or source job).",
  ),
  TemplateRefMissingInvalidSpec: ownReason(
    "Terminal",
    REFERENCE,
    "createType TEMPLATE without templateRef; nothing is ordered.",
    "Set spec.templateRef, or change createType.",
  ),
  CopyFromMissingInvalidSpec: ownReason(
    "Terminal",
    REFERENCE,
    "createType COPY without copyFrom; nothing is ordered.",
    "Set spec.copyFrom, or change createType.",
  ),
  TemplateNotFound: referenceWait(
    "The TrainingTemplate in templateRef does not exist (yet); the job waits for it.",
  ),
  TemplateNotReady: referenceWait(
    "The TrainingTemplate in templateRef has no template id yet; the job waits for it.",
    REFERENCE_NOT_READY_ACTION,
  ),
  SourceJobNotFound: referenceWait(
    "The TrainingJob in copyFrom does not exist (yet); the job waits for it.",
  ),
  NasVolumeNotFound: referenceWait(
    "A NasVolume in storage[].nasVolumeRef does not exist (yet); the job waits for it.",
  ),
  BucketNotFound: referenceWait(
    "A Bucket in bucketEnv[].bucketRef does not exist (yet); the job waits for it.",
  ),
  BucketNotReady: referenceWait(
    "A Bucket in bucketEnv[].bucketRef is not Ready yet (no bucket name and endpoint in its status); the job waits for it.",
    REFERENCE_NOT_READY_ACTION,
  ),
  UnknownProductRefused: ownReason(
    "Terminal",
    ["Ready", "Synced"],
    "productCode is not in the service's training product list; nothing is ordered. Tried again when a TrainingProduct of that code appears (the catalog's next refresh).",
    "Create a TrainingJob with a product the message's command lists (the catalog of the object's connection); or, for a product the service is adding, wait for it, or refresh the catalog now (aidc.io/reconcile-requested-at on its ServiceConnection or a TrainingProduct).",
  ),
  InsufficientCapacity: ownReason(
    "UnderWay",
    ["Ready", "Synced"],
    "The product has fewer units left than workerCount; no order is placed until enough are available.",
  ),
  OpenPortRefused: ownReason(
    "Terminal",
    ["Synced"],
    "spec.ports asks for ports to open but the open-port operation is not configured or not answered by the service (service.endpoints.openPodPort); the task is still observed.",
    "Set service.endpoints.openPodPort to your service's open-port path, or remove spec.ports.",
  ),
  ExposureDisabled: ownReason(
    "Terminal",
    ["Synced"],
    "spec.exposePorts is true but exposure is disabled in the operator (config trainingJob.exposure.enabled, chart value exposure.enabled): no Service or EndpointSlice is made.",
    "Enable it, or set exposePorts: false.",
  ),
  ExposureAddressRefused: ownReason(
    "Terminal",
    ["Synced"],
    "The service gave an open port an external address outside trainingJob.exposure.allowedCidrs (chart value exposure.allowedCidrs), e.g. a pod or node IP: no Service or EndpointSlice points at it.",
    "Add the service's gateway range if the address is right.",
  ),
  PodsNotYetRead: ownReason(
    "UnderWay",
    ["PodsObserved"],
    "The first look at a new task read the task alone (what Ready needs): its storages and pods are left out of the status until a follow-up poll soon after reads them, and the condition goes away then.",
  ),
  PodOperationMissing: ownReason(
    "Terminal",
    ["PodsObserved"],
    "The service does not answer a pod operation (the pod list, a pod's detail or port list; a bare 404, or disabled): pods, or that part of them, are left out of the status; the task is still observed and may be Ready.",
    "Set the operation's path (the message names its service.endpoints key). The condition goes away once the pods are read in full.",
  ),
});
