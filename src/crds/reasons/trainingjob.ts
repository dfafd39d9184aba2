/**
 * The reasons only TrainingJob writes (reasons.ts has the whole table).
 */
import { entry, REFUSAL, type ReasonEntry, TJ } from "./entry.js";

/** TrainingJob. */
export const TRAINING_JOB_REASONS = {
  TaskRunning: entry("Ok", ["Ready"], TJ, "The task is running."),
  TaskSucceeded: entry(
    "Ok",
    ["Ready", "Succeeded"],
    TJ,
    "The task finished successfully: Ready=True (the task did what was asked) and Succeeded=True.",
  ),
  TaskStarting: entry("UnderWay", ["Ready"], TJ, "The task is queued or starting."),
  TaskFailed: entry(
    "Terminal",
    ["Ready"],
    TJ,
    "The task failed in the service; the message has the last execution record.",
    "Create a new TrainingJob to run it again.",
  ),
  TaskStopped: entry(
    "Resting",
    ["Ready"],
    TJ,
    "The task was stopped in the service; nothing is under way.",
    "Nothing, if you stopped it. To run it again, create a new TrainingJob (a task cannot be restarted through the operator).",
  ),
  UnknownTaskStatus: entry(
    "UnderWay",
    ["Ready"],
    TJ,
    "The service reports a task status the operator does not know; map it in the operator configuration (trainingJob.statusClasses).",
  ),
  MissingFieldsInvalidSpec: entry(
    "Terminal",
    REFUSAL,
    TJ,
    "Fields the create needs are neither in the spec nor in the template or source job; nothing is ordered.",
    "Add the fields the message names to the spec (or to the template or source job).",
  ),
  TemplateRefMissingInvalidSpec: entry(
    "Terminal",
    [...REFUSAL, "ReferencesResolved"],
    TJ,
    "createType TEMPLATE without templateRef; nothing is ordered.",
    "Set spec.templateRef, or change createType.",
  ),
  CopyFromMissingInvalidSpec: entry(
    "Terminal",
    [...REFUSAL, "ReferencesResolved"],
    TJ,
    "createType COPY without copyFrom; nothing is ordered.",
    "Set spec.copyFrom, or change createType.",
  ),
  TemplateNotFound: entry(
    "UnderWay",
    [...REFUSAL, "ReferencesResolved"],
    TJ,
    "The TrainingTemplate in templateRef does not exist (yet); the job waits for it.",
  ),
  TemplateNotReady: entry(
    "UnderWay",
    [...REFUSAL, "ReferencesResolved"],
    TJ,
    "The TrainingTemplate in templateRef has no template id yet; the job waits for it.",
  ),
  SourceJobNotFound: entry(
    "UnderWay",
    [...REFUSAL, "ReferencesResolved"],
    TJ,
    "The TrainingJob in copyFrom does not exist (yet); the job waits for it.",
  ),
  SourceJobNotReady: entry(
    "UnderWay",
    [...REFUSAL, "ReferencesResolved"],
    ["TrainingJob", "TrainingTemplate"],
    "The referenced TrainingJob has no task id yet; the object waits for it.",
  ),
  NasVolumeNotFound: entry(
    "UnderWay",
    [...REFUSAL, "ReferencesResolved"],
    TJ,
    "A NasVolume in storage[].nasVolumeRef does not exist (yet); the job waits for it.",
  ),
  BucketNotFound: entry(
    "UnderWay",
    [...REFUSAL, "ReferencesResolved"],
    TJ,
    "A Bucket in bucketEnv[].bucketRef does not exist (yet); the job waits for it.",
  ),
  BucketNotReady: entry(
    "UnderWay",
    [...REFUSAL, "ReferencesResolved"],
    TJ,
    "A Bucket in bucketEnv[].bucketRef is not Ready yet (no bucket name and endpoint in its status); the job waits for it.",
  ),
  NasVolumeNotReady: entry(
    "UnderWay",
    [...REFUSAL, "ReferencesResolved"],
    ["TrainingJob", "TrainingTemplate"],
    "A NasVolume in storage[].nasVolumeRef is not Ready yet; the object waits for it.",
  ),
  UnknownProductRefused: entry(
    "Terminal",
    REFUSAL,
    TJ,
    "productCode is not in the service's training product list; nothing is ordered.",
    "Create a TrainingJob with a listed product.",
  ),
  InsufficientCapacity: entry(
    "UnderWay",
    REFUSAL,
    TJ,
    "The product has fewer units left than workerCount; no order is placed until enough are available.",
  ),
  OpenPortRefused: entry(
    "Terminal",
    ["Synced"],
    TJ,
    "spec.ports asks for ports to open but the open-port operation is not configured or not answered by the service (service.endpoints.openPodPort); the task is still observed.",
    "Set service.endpoints.openPodPort to your service's open-port path, or remove spec.ports.",
  ),
  ExposureDisabled: entry(
    "Terminal",
    ["Synced"],
    TJ,
    "spec.exposePorts is true but exposure is disabled in the operator (config trainingJob.exposure.enabled, chart value exposure.enabled): no Service or EndpointSlice is made.",
    "Enable it, or set exposePorts: false.",
  ),
  ExposureAddressRefused: entry(
    "Terminal",
    ["Synced"],
    TJ,
    "The service gave an open port an external address outside trainingJob.exposure.allowedCidrs (chart value exposure.allowedCidrs), e.g. a pod or node IP: no Service or EndpointSlice points at it.",
    "Add the service's gateway range if the address is right.",
  ),
  PodsNotYetRead: entry(
    "UnderWay",
    ["PodsObserved"],
    TJ,
    "The first look at a new task read the task alone (what Ready needs): its storages and pods are left out of the status until a follow-up poll soon after reads them, and the condition goes away then.",
  ),
  PodOperationMissing: entry(
    "Terminal",
    ["PodsObserved"],
    TJ,
    "The service does not answer a pod operation (the pod list, a pod's detail or port list; a bare 404, or disabled): pods, or that part of them, are left out of the status; the task is still observed and may be Ready.",
    "Set the operation's path (the message names its service.endpoints key). The condition goes away once the pods are read in full.",
  ),
} as const satisfies Record<string, ReasonEntry>;
