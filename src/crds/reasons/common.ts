/**
 * The reasons every kind writes (reasons.ts has the whole table): the outcome of a
 * reconcile, the service's refusals, tenancy's refused bindings and the deletion policy.
 */
import { ALL, EVERY, entry, MANAGED, type ReasonEntry } from "./entry.js";

/** Shared by every kind. */
export const COMMON_REASONS = {
  ReconcileSuccess: entry("Ok", ["Synced"], EVERY, "The last reconcile succeeded."),
  ReconcileError: entry(
    "UnderWay",
    ["Synced"],
    EVERY,
    "The last reconcile failed with a retryable error (network, 5xx, 429, a malformed answer); the operator backs off and retries. The message says what failed.",
  ),
  ReconcileTerminal: entry(
    "Terminal",
    ["Synced"],
    EVERY,
    "The service refused the request, or the operator cannot do what the spec asks; the message says why.",
    "Change the spec (or the operator's configuration).",
  ),
  ApiKeyRefused: entry(
    "Terminal",
    ["Ready", "Synced"],
    EVERY,
    "The service refused the API key (403 or 401), or the key cannot be read.",
    "Fix the API-key Secret: the operator tries again at once when it changes (a ServiceConnection's Secret at once, the chart's mounted one when the kubelet updates the file, within about a minute), and on a slow backoff, in case the refusals were a passing burst.",
  ),
  OperationMissingTerminal: entry(
    "Terminal",
    ["Ready", "Synced"],
    ALL,
    "An operation a step needs is missing at the service (a bare 404) or disabled; the message names it and its configuration key. Nothing is ordered; retried on a slow backoff.",
    "Set the operation's path under service.endpoints (the message names the key) if your service has it at another path; otherwise the kind cannot be used with this service.",
  ),
  SubscriptionResultUnknownTerminal: entry(
    "Terminal",
    ["Ready", "Synced"],
    MANAGED,
    "A subscription result has a shape or state the operator cannot map; the message names the configuration key to set. Retried on a slow backoff.",
    "Set the configuration key the message names (service.subscriptionResult) to how your service spells the result.",
  ),
  ReconcileTimeout: entry(
    "UnderWay",
    ["Synced"],
    ALL,
    "A reconcile took longer than reconcileTimeoutMs (60 s) and was abandoned (its service calls stopped, its later writes refused), so that slow service answers cannot hold the controller's workers; it is retried with backoff. A routine poll of a settled object, or the follow-up look of one still settling, is first looked at again quietly, up to 3 times in a row (it most likely waited for the routine call budget or behind work).",
  ),
  WriteNotKept: entry(
    "Terminal",
    ["Ready", "Synced"],
    EVERY,
    "The API server accepted a write of the operator's records into the object (an aidc.io/ annotation, the finalizer, a spec field it fills in late under LateInitialize) but its answer does not show it: a mutating admission webhook or policy of the cluster changed the write. What needs the record waits (no create is sent without its marker); the message names what was not kept. Retried on a slow backoff. A status write it changes is told by a Warning Event of this reason instead, and that status is not written again at the same generation.",
    "Exclude the operator's aidc.io/ annotations and finalizers (or its objects) from the webhook or policy (`kubectl get mutatingwebhookconfigurations`; from Kubernetes 1.36, when MutatingAdmissionPolicy is on by default, also `mutatingadmissionpolicies`); for a spec field, let the webhook keep it or leave LateInitialize out of spec.managementPolicies; see [Admission control](troubleshooting.md#admission-control).",
  ),
  AdmissionDenied: entry(
    "Terminal",
    ["Synced"],
    EVERY,
    "An admission webhook or policy of the cluster refused a write of the operator (its finalizer, an aidc.io/ annotation, an object it makes); the message names the webhook or policy and quotes it. What needs the write waits (no create is sent without its marker); retried with backoff.",
    "Allow the write in the webhook or policy the message names, or exclude the operator's objects or service account from it; see [Admission control](troubleshooting.md#admission-control).",
  ),
  MalformedServiceAnswer: entry(
    "UnderWay",
    ["Synced"],
    ALL,
    "The service's answer could not be read: not JSON, not the expected shape (the message names the field), or longer than service.maxResponseBytes (cut off). Retried with backoff.",
  ),
  ServiceRedirected: entry(
    "Terminal",
    ["Ready", "Synced"],
    ALL,
    "The service answered with a redirect (3xx), which the operator never follows (the API key would go to another address); the message names the Location.",
    "Set service.baseUrl (or the ServiceConnection's baseUrl) to the address the service really answers on. Retried on a slow backoff, so a passing redirect or a corrected connection needs no change of the object.",
  ),
  ReadRefused: entry(
    "Terminal",
    ["Ready", "Synced"],
    ALL,
    "The service refused a read (a GET answered with a status other than 401, 403, 404, 429 or 5xx, e.g. 400 or 409); the message has the service's words. A read carries nothing of the spec to correct, so the object is read again on a slow backoff (`holdBackoff`): a passing refusal clears by itself.",
    "Nothing while it passes. If it lasts, the service's message says why it refuses (an id it does not accept, a gateway in the way); if the id is wrong, delete the object and bind a new one to the right id.",
  ),
  RequestTooLarge: entry(
    "Terminal",
    ["Ready", "Synced"],
    ALL,
    "A proxy or gateway in front of the service refused a request as too large (HTTP 413, 414 or 431 without a service envelope, e.g. nginx's client_max_body_size); nothing reached the service. The message names the call and the body's size. Retried on a slow backoff (`holdBackoff`).",
    "Raise the front's limit above the size the message names (or shorten the spec's long fields); a raised limit needs no change of the object.",
  ),
  InvalidRemoteId: entry(
    "Terminal",
    ["Synced"],
    ALL,
    "An id that would name the remote resource (the aidc.io/external-id annotation, spec.storageId, spec.instanceId) is not a well-formed service id, e.g. `..`; nothing is sent.",
    "Correct the annotation or the spec.",
  ),
} as const satisfies Record<string, ReasonEntry>;

/** Tenancy (docs/security.md): refused bindings, on every kind. */
export const TENANCY_REASONS = {
  AlreadyBoundRefused: entry(
    "Terminal",
    ["Ready", "Synced", "Bound"],
    ALL,
    "Another object in the cluster is already bound to the remote id this object names (one object per remote resource); nothing is sent to the service. The message names the other object only when it is in the same namespace.",
    "Remove the id from this object, or the other object; checked again every poll.",
  ),
  AdoptionRefused: entry(
    "Terminal",
    ["Ready", "Synced", "Bound"],
    ALL,
    "The object binds to a remote resource the operator did not create for this namespace (a hand-set aidc.io/external-id, a spec id such as storageId, volumeId or fileSystemId, a raw storageId mount, a CciInstance, a FileSystem mount on a raw instanceId), and the namespace is not in adoption.namespaces.",
    "Add it there (operator config, chart value adoption.namespaces), or use a resource the namespace's own objects created.",
  ),
  OwnedElsewhereRefused: entry(
    "Terminal",
    ["Ready", "Synced"],
    MANAGED,
    "The remote resource carries the owner mark of another namespace's object: the operator created it for that namespace, and does not bind it from this one, even under Observe (nothing of it is mirrored, updated or deleted).",
    "Bind this object to a resource of its own namespace.",
  ),
} as const satisfies Record<string, ReasonEntry>;

/** The deletion policy, on every kind that has one. */
export const DELETION_POLICY_REASONS = {
  DeletePolicyHonoured: entry(
    "Ok",
    ["DeletionPolicy"],
    MANAGED,
    "deletionPolicy Delete can be honoured: a delete operation is configured.",
  ),
  NoDeleteOperation: entry(
    "Terminal",
    ["DeletionPolicy"],
    MANAGED,
    "deletionPolicy is Delete but the operator has no delete operation configured for this kind: deleting the object would leave the remote resource in the service.",
    "Configure the delete operation ([install.md](install.md#deleting-remote-resources)) or set deletionPolicy: Orphan.",
  ),
} as const satisfies Record<string, ReasonEntry>;
