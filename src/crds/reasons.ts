/**
 * Every condition reason the operator writes, in one table: what it means, on which
 * kinds and condition types it appears, and what it says about the object's health.
 * The kstatus conditions (`Reconciling`, `Stalled`), the Argo CD health scripts'
 * terminal lists (scripts/generate-argocd.ts) and the reason table of
 * docs/conditions.md are all derived from {@link CONDITION_REASONS}; nothing else
 * decides whether a reason is terminal.
 */

/** The operator's kinds (the `kind` of each CrdDefinition). */
export type KindName = "TrainingJob" | "NasVolume" | "CciInstance" | "TrainingTemplate";

/** The kinds whose remote resource the generic managed loop drives. */
const MANAGED: readonly KindName[] = ["TrainingJob", "NasVolume", "TrainingTemplate"];
/** Every kind. */
const ALL: readonly KindName[] = [...MANAGED, "CciInstance"];

/**
 * What a reason says about the object:
 * - `Ok`: as asked (Ready or Synced True, nothing to do).
 * - `UnderWay`: the operator is working, or waiting for something that is on its way
 *   (a subscription, a referenced object, capacity); `Reconciling=True`.
 * - `Terminal`: will not get better without a person (a change of the spec, of the
 *   API-key Secret, of the operator's configuration, or a decision); on Ready or
 *   Synced it makes `Stalled=True` and Argo CD's Degraded.
 * - `Resting`: not ready, but nothing is wrong and nothing is under way (a task or an
 *   instance stopped in the service).
 */
export type ReasonState = "Ok" | "UnderWay" | "Terminal" | "Resting";

/** One row of the reason table. */
export interface ReasonEntry {
  state: ReasonState;
  /** The condition types that carry the reason. */
  conditions: readonly string[];
  /** The kinds that write it. */
  kinds: readonly KindName[];
  /** What it means, and for a Terminal reason what the user does about it. */
  meaning: string;
}

const entry = (
  state: ReasonState,
  conditions: readonly string[],
  kinds: readonly KindName[],
  meaning: string,
): ReasonEntry => ({ state, conditions, kinds, meaning });

const TJ: readonly KindName[] = ["TrainingJob"];
const NAS: readonly KindName[] = ["NasVolume"];
const CCI: readonly KindName[] = ["CciInstance"];
const TT: readonly KindName[] = ["TrainingTemplate"];
const REFUSAL = ["Ready", "Synced"] as const;

/** The reason table (see the module comment). */
export const CONDITION_REASONS = {
  // Shared by every kind.
  ReconcileSuccess: entry("Ok", ["Synced"], ALL, "The last reconcile succeeded."),
  ReconcileError: entry(
    "UnderWay",
    ["Synced"],
    ALL,
    "The last reconcile failed with a retryable error (network, 5xx, 429, a malformed answer); the operator backs off and retries. The message says what failed.",
  ),
  ReconcileTerminal: entry(
    "Terminal",
    ["Synced"],
    ALL,
    "The service refused the request, or the operator cannot do what the spec asks; the message says why. Change the spec (or the operator's configuration).",
  ),
  ApiKeyRefused: entry(
    "Terminal",
    ["Ready", "Synced"],
    ALL,
    "The service refused the API key (403 or 401), or the key cannot be read. Fix the API-key Secret: the operator tries again at once when it changes (and on a slow backoff, in case the refusals were a passing burst).",
  ),
  OperationMissingTerminal: entry(
    "Terminal",
    ["Ready", "Synced"],
    ALL,
    "An operation a step needs is missing at the service (a bare 404) or disabled; the message names it and its configuration key. Nothing is ordered; retried on a slow backoff.",
  ),
  SubscriptionResultUnknownTerminal: entry(
    "Terminal",
    ["Synced"],
    [...MANAGED],
    "A subscription result has a shape or state the operator cannot map; the message names the configuration key to set. Retried on a slow backoff.",
  ),
  ReconcileTimeout: entry(
    "UnderWay",
    ["Synced"],
    ALL,
    "A reconcile took longer than reconcileTimeoutMs (60 s) and was abandoned (its service calls stopped, its later writes refused), so that slow service answers cannot hold the controller's workers; it is retried with backoff.",
  ),
  MalformedServiceAnswer: entry(
    "UnderWay",
    ["Synced"],
    ALL,
    "The service's answer could not be read: not JSON, not the expected shape (the message names the field), or longer than service.maxResponseBytes (cut off). Retried with backoff.",
  ),
  ServiceRedirected: entry(
    "Terminal",
    ["Synced"],
    ALL,
    "The service answered with a redirect (3xx), which the operator never follows (the API key would go to another address); the message names the Location. Set service.baseUrl to the address the service really answers on.",
  ),
  InvalidRemoteId: entry(
    "Terminal",
    ["Synced"],
    ALL,
    "An id that would name the remote resource (the aidc.io/external-id annotation, spec.storageId, spec.instanceId) is not a well-formed service id, e.g. `..`; nothing is sent. Correct the annotation or the spec.",
  ),
  // Tenancy (docs/install.md, Security model): refused bindings, on every kind.
  AlreadyBoundRefused: entry(
    "Terminal",
    ["Ready", "Synced", "Bound"],
    ALL,
    "Another object in the cluster is already bound to the remote id this object names (one object per remote resource); nothing is sent to the service. The message names the other object only when it is in the same namespace. Remove the id from this object, or the other object; checked again every poll.",
  ),
  AdoptionRefused: entry(
    "Terminal",
    ["Ready", "Synced", "Bound"],
    ALL,
    "The object binds to a remote resource the operator did not create for this namespace (a hand-set aidc.io/external-id, spec.storageId, a raw storageId mount, a CciInstance), and the namespace is not in adoption.namespaces. Add it there (operator config, chart value adoption.namespaces), or use a resource the namespace's own objects created.",
  ),
  OwnedElsewhereRefused: entry(
    "Terminal",
    ["Ready", "Synced"],
    [...MANAGED],
    "The remote resource carries the owner mark of another namespace's object: the operator created it for that namespace, and does not touch it from this one (no update, no Delete). Bind this object to a resource of its own namespace.",
  ),
  // The generic managed loop (TrainingJob, NasVolume, TrainingTemplate).
  Available: entry(
    "Ok",
    ["Ready"],
    ["NasVolume", "TrainingTemplate"],
    "The remote resource exists and is usable.",
  ),
  Creating: entry(
    "UnderWay",
    ["Ready"],
    [...MANAGED],
    "The remote resource is being created (subscription pending, or a create's outcome is being looked up).",
  ),
  Updating: entry(
    "UnderWay",
    ["Synced"],
    [...MANAGED],
    "A change of the spec waits to be sent (e.g. for an earlier change to show).",
  ),
  Deleting: entry(
    "UnderWay",
    ["Ready"],
    [...MANAGED],
    "The object is being deleted (deletionPolicy Delete) and the operator waits: for a create in flight to resolve, for the kind's steps before deletion (e.g. a detach), or, after a delete the service accepted, until the service no longer shows the resource. The finalizer stays until then; the message says what is awaited.",
  ),
  CreateFailed: entry(
    "Terminal",
    ["Ready"],
    [...MANAGED],
    "The service refused the order (the subscription failed); the message has its reason. Change the spec: a new generation is ordered again.",
  ),
  CreateOutcomeUnknown: entry(
    "Terminal",
    REFUSAL,
    [...MANAGED],
    "A create may or may not have happened and the operator cannot tell. Set the annotation aidc.io/external-id to the resource's id, or remove aidc.io/create-pending to create it anew.",
  ),
  RemoteNotFound: entry(
    "Terminal",
    ["Ready"],
    [...MANAGED],
    "The bound remote resource does not exist (deleted outside the cluster, or an adopted id that never existed). The message says how to bind the object anew: remove the aidc.io/external-id annotation, or, for an id in the spec (which cannot change), delete the object and create a new one.",
  ),
  // TrainingJob.
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
    "The task failed in the service; the message has the last execution record. Create a new TrainingJob to run it again.",
  ),
  TaskStopped: entry(
    "Resting",
    ["Ready"],
    TJ,
    "The task was stopped in the service; nothing is under way.",
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
  ),
  TemplateRefMissingInvalidSpec: entry(
    "Terminal",
    REFUSAL,
    TJ,
    "createType TEMPLATE without templateRef; nothing is ordered.",
  ),
  CopyFromMissingInvalidSpec: entry(
    "Terminal",
    REFUSAL,
    TJ,
    "createType COPY without copyFrom; nothing is ordered.",
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
    "productCode is not in the service's training product list; nothing is ordered. Create a TrainingJob with a listed product.",
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
  ),
  ExposureDisabled: entry(
    "Terminal",
    ["Synced"],
    TJ,
    "spec.exposePorts is true but exposure is disabled in the operator (config trainingJob.exposure.enabled, chart value exposure.enabled): no Service or EndpointSlice is made. Enable it, or set exposePorts: false.",
  ),
  ExposureAddressRefused: entry(
    "Terminal",
    ["Synced"],
    TJ,
    "The service gave an open port an external address outside trainingJob.exposure.allowedCidrs (chart value exposure.allowedCidrs), e.g. a pod or node IP: no Service or EndpointSlice points at it. Add the service's gateway range if the address is right.",
  ),
  Resolved: entry("Ok", ["ReferencesResolved"], TJ, "Every referenced object is ready."),
  PodOperationMissing: entry(
    "Terminal",
    ["PodsObserved"],
    TJ,
    "The service does not answer a pod operation (the pod list, a pod's detail or port list; a bare 404, or disabled): pods, or that part of them, are left out of the status; the task is still observed and may be Ready. Set the operation's path (the message names its service.endpoints key). The condition goes away once the pods are read in full.",
  ),
  // NasVolume.
  ProductNotFoundRefused: entry(
    "Terminal",
    REFUSAL,
    NAS,
    "The NAS product is not offered (in that compute center); nothing is ordered.",
  ),
  CapacityRefused: entry(
    "Terminal",
    REFUSAL,
    NAS,
    "capacityGB is outside what the product allows; nothing is ordered or scaled.",
  ),
  ProductUnavailable: entry(
    "UnderWay",
    REFUSAL,
    NAS,
    "The NAS product cannot be provisioned right now; checked again every poll.",
  ),
  Unavailable: entry(
    "UnderWay",
    ["Ready"],
    ["NasVolume", "CciInstance"],
    "The remote resource exists but is in a state that is not usable yet.",
  ),
  RemoteCapacityUnknown: entry(
    "UnderWay",
    ["Synced"],
    NAS,
    "The service did not report the storage's quota as a number, so a capacity change cannot be computed.",
  ),
  ScaleOutcomeUnknown: entry(
    "Terminal",
    ["Synced"],
    NAS,
    "A scale was sent but does not show in the quota; it is not sent twice. Check the storage, then remove the aidc.io/nas-scale annotation.",
  ),
  ShrinkBelowUsedRefused: entry(
    "Terminal",
    ["Synced"],
    NAS,
    "capacityGB is below the amount in use; the storage keeps its size.",
  ),
  // TrainingTemplate.
  NameTakenRefused: entry(
    "Terminal",
    REFUSAL,
    TT,
    "Another template of the service has this name; choose another spec.name.",
  ),
  // CciInstance.
  Running: entry("Ok", ["Ready"], CCI, "The instance is RUNNING."),
  Pending: entry("UnderWay", ["Ready"], CCI, "The instance is PENDING."),
  Releasing: entry("UnderWay", ["Ready"], CCI, "The instance is being released."),
  Stopped: entry(
    "Resting",
    ["Ready"],
    CCI,
    "The instance is STOPPED; the operator only observes it.",
  ),
  StatusUnknown: entry("UnderWay", ["Ready"], CCI, "The service gave no status for the instance."),
  InstanceFailed: entry(
    "Terminal",
    ["Ready"],
    CCI,
    "The instance is in ERROR or FAILED; the message has the service's error description and suggestion.",
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
    "The bound instance does not exist (any more); the object stays bound to it. Delete the object (the operator never deletes instances).",
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
    "An image save may or may not have happened; it is not retried. Check the service, then remove the entry from spec.images and add it back.",
  ),
  // The deletion policy, on every kind that has one.
  DeletePolicyHonoured: entry(
    "Ok",
    ["DeletionPolicy"],
    [...MANAGED],
    "deletionPolicy Delete can be honoured: a delete operation is configured.",
  ),
  NoDeleteOperation: entry(
    "Terminal",
    ["DeletionPolicy"],
    [...MANAGED],
    "deletionPolicy is Delete but the operator has no delete operation configured for this kind: deleting the object would leave the remote resource in the service. Configure the delete operation (docs/install.md) or set deletionPolicy: Orphan.",
  ),
} as const satisfies Record<string, ReasonEntry>;

/** A condition reason the operator writes (PascalCase). */
export type ConditionReason = keyof typeof CONDITION_REASONS;

/** The entry of `reason`, or undefined for a string that is not one of ours. */
export function reasonEntry(reason: string): ReasonEntry | undefined {
  return Object.hasOwn(CONDITION_REASONS, reason)
    ? CONDITION_REASONS[reason as ConditionReason]
    : undefined;
}

/** True when `reason` is one of the operator's reasons. */
export function isConditionReason(reason: string): reason is ConditionReason {
  return reasonEntry(reason) !== undefined;
}

/** True when `reason` is Terminal: retrying will not help, a person must act. */
export function isTerminalReason(reason: string): boolean {
  return reasonEntry(reason)?.state === "Terminal";
}

/** The Terminal reasons a kind writes, sorted (the Argo CD scripts' list). */
export function terminalReasonsOf(kind: string): ConditionReason[] {
  return (Object.keys(CONDITION_REASONS) as ConditionReason[])
    .filter((r) => {
      const e: ReasonEntry = CONDITION_REASONS[r];
      return e.state === "Terminal" && (e.kinds as readonly string[]).includes(kind);
    })
    .sort();
}
