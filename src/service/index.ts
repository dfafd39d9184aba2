/**
 * The service API for the rest of the operator: the client, its errors, the endpoint
 * table, the client-token helpers, and the types of every request and resource. Import
 * from here rather than from the files behind it.
 */

export type { AccountCalls, ServiceAccount } from "./account.js";
export type { RetryPolicy } from "./backoff.js";
export { type CallContext, UNSCOPED_CALLS } from "./call-context.js";
export { ServiceClient, type ServiceClientOptions } from "./client.js";
export {
  DEFAULT_RATE_LIMIT,
  DEFAULT_RETRY_POLICY,
  DEFAULT_TIMEOUT_MS,
} from "./defaults.js";
export {
  DEFAULT_ENDPOINTS,
  ENDPOINT_NAMES,
  type EndpointDefinition,
  type EndpointName,
  type EndpointOverrides,
  type EndpointTable,
  isEndpointName,
  resolveEndpointTable,
} from "./endpoints.js";
export {
  EndpointDisabledError,
  endpointConfigKey,
  isTerminalServiceError,
  ServiceAuthError,
  ServiceError,
  type ServiceErrorDetails,
  ServiceInvalidIdError,
  ServiceInvalidRequestError,
  ServiceMalformedResponseError,
  ServiceNotFoundError,
  ServiceOperationMissingError,
  ServiceReadRefusedError,
  ServiceRedirectError,
  ServiceRefusedError,
  ServiceRequestTooLargeError,
  ServiceResultShapeError,
  ServiceThrottledError,
  ServiceUnavailableError,
} from "./errors.js";
export type {
  CreateVolumeRequest,
  VolumeListQuery,
} from "./kinds/blockvolume.js";
export type { CciListQuery, SaveCciImageRequest } from "./kinds/cciinstance.js";
export {
  type CreateFileSystemMountRequest,
  type CreateFileSystemRequest,
  type FileSystemListQuery,
  FileSystemOperations,
} from "./kinds/filesystem.js";
export type {
  NasAvailabilityQuery,
  NasListQuery,
  ScaleNasRequest,
  SubscribeNasRequest,
} from "./kinds/nasvolume.js";
export type { CreateTrainingTaskRequest } from "./kinds/trainingjob.create.js";
export type { TrainingTaskListQuery } from "./kinds/trainingjob.js";
export type { OpenPodPortRequest } from "./kinds/trainingjob.pods.js";
export type {
  TemplateListQuery,
  TemplateResource,
  TrainingTemplateInput,
} from "./kinds/trainingtemplate.js";
export {
  ASSUMED_OPERATIONS,
  OperationAvailability,
  type OperationVerdict,
} from "./operation-availability.js";
export type { OperationArgs, OperationCaller, OperationState } from "./operation-caller.js";
export type { ListedIds, PageWalkEnd } from "./pagination.js";
export type { CallPriority, RateLimit } from "./rate-limiter.js";
export type { JsonObject, StorageObject } from "./schemas/block-file-storage.js";
export { type BlockVolume, VOLUME_STATES, type VolumeState } from "./schemas/block-volumes.js";
export type { CciErrorDetails, CciInstance, SaveCciImageResult } from "./schemas/cci.js";
export { CCI_STATUSES } from "./schemas/cci.js";
export {
  CLIENT_TOKEN_ENV,
  clientTokenInDescription,
  clientTokenMarker,
  OWNER_MARK_ENV,
  ownerMarkInDescription,
  SUBSCRIPTION_STATES,
  type SubscriptionResult,
  type SubscriptionState,
  stripClientTokenMarker,
  withClientTokenMarker,
  withCreateMarkers,
} from "./schemas/create.js";
export type { Page } from "./schemas/data.js";
export {
  CREATE_TYPES,
  type CreateType,
  IMAGE_TYPES,
  type ImageType,
  PORT_PROTOCOLS,
  type PortProtocol,
  SCALE_TYPES,
  type ScaleType,
  TRAINING_FRAMEWORKS,
  TRAINING_TYPES,
  type TrainingFramework,
  type TrainingType,
} from "./schemas/enums.js";
export type {
  CreatedObject,
  FileSystem,
  FileSystemMount,
  StorageStateClass,
} from "./schemas/file-systems.js";
export { storageStateClass } from "./schemas/file-systems.js";
export { NAS_STATUSES, type NasInstance, type NasProduct } from "./schemas/nas.js";
export type { OpenPort, PodOpenPorts, PodResource, TrainingPod } from "./schemas/pods.js";
export {
  isServiceId,
  matchEnum,
  normalizeTimestamp,
  SERVICE_ID_PATTERN,
  SERVICE_ID_RULE,
  toRfc3339,
} from "./schemas/primitives.js";
export type { StorageConfigItem, TaskResource } from "./schemas/storage-config.js";
export type { TrainingTemplate } from "./schemas/template.js";
export type { TrainingProduct, TrainingTask } from "./schemas/training.js";
export type { RequestObservation } from "./transport-options.js";
