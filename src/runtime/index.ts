/**
 * The controller runtime's public API, for controller authors: one import.
 * See README.md beside this file for how the pieces fit.
 */
export { type CacheReader, type IndexFunc, referrersByIndex } from "./cache.js";
export {
  ControllerBuilder,
  type ControllerDefinition,
  controller,
  type ErrorPolicy,
  type MapToKeys,
  type ReconcileContext,
  type ReconcileResult,
  type Reconciler,
  type SettledCheck,
} from "./controller.js";
export { DEFAULT_RECONCILE_TIMEOUT_MS } from "./defaults.js";
export {
  ConflictError,
  errorMessage,
  errorReason,
  failureMessage,
  HOLD_RETRY_NOTE,
  isExternalHold,
  isTerminal,
  ReconcileTimeoutError,
  RetryableError,
  TerminalError,
  WriteNotKeptError,
} from "./errors.js";
export { EventRecorder, type EventType } from "./events.js";
export { FIELD_MANAGER, KubeClient } from "./kube.js";
export { isConflict, isNotFound, KubeApiError, statusCodeOf } from "./kube-errors.js";
export { ensureFinalizer, patchSpec, removeFinalizer } from "./lifecycle-writes.js";
export { DEFAULT_CONNECTION_LABEL, RuntimeMetrics, type ServiceRequestInfo } from "./metrics.js";
export {
  type Condition,
  type ConditionInput,
  type ConditionStatus,
  capAddress,
  capEnvName,
  capFreeText,
  capText,
  capValue,
  conditionMessage,
  getCondition,
  hasFinalizer,
  isConditionTrue,
  MAX_CONDITION_MESSAGE_CHARS,
  patchStatus,
  REMOTE_ADDRESS_CHARS,
  REMOTE_VALUE_CHARS,
  removeCondition,
  type StatusPatchResult,
  setAnnotations,
  setCondition,
  withKstatusConditions,
} from "./object-writes.js";
export { REDACTED, SecretRedactor } from "./outbound-guards.js";
export {
  type DeclaredRule,
  mergeRules,
  missingPermissions,
  type PolicyRule,
} from "./permissions.js";
export {
  apiVersionOf,
  type Clock,
  formatKey,
  type KubeObject,
  keyOf,
  type ObjectKey,
  type ObjectMeta,
  objectKeyString,
  parseKey,
  type ResourceDescriptor,
  rfc3339,
  systemClock,
} from "./resource.js";
export type { QueuePriority } from "./workqueue.js";
