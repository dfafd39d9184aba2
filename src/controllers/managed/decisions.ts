/**
 * What the managed loop reads from an object's own fields: the create protocol's
 * annotations, the user's steering, the deletion policy, whether the object is settled
 * and so how its calls go. The create protocol writes `create-pending` (the client token
 * the remote resource carries) before the create is sent, then the key, then the id, the
 * marker kept beside them; after a crash the token finds the resource (create-recovery.ts):
 * a create is never sent twice. Annotations, not status: backup tools do not restore status.
 */
import { randomUUID } from "node:crypto";
import type { SettledCheck } from "../../runtime/controller.js";
import { DEFAULT_RECONCILE_TIMEOUT_MS } from "../../runtime/defaults.js";
import { type Condition, type ConditionInput, getCondition } from "../../runtime/object-writes.js";
import type { KubeObject, ObjectMeta } from "../../runtime/resource.js";
import type { CallContext } from "../../service/call-context.js";
import { DEFAULT_TIMEOUT_MS } from "../../service/defaults.js";
import {
  ServiceNotFoundError,
  ServiceReadRefusedError,
  ServiceUnavailableError,
} from "../../service/errors.js";

/** What these decisions read of a managed object (`ManagedObject` of call.ts). */
type Managed = {
  metadata?: ObjectMeta;
  spec: { deletionPolicy?: "Orphan" | "Delete"; managementPolicies?: readonly string[] };
  status?: { conditions?: Condition[]; lastHandledReconcileAt?: string };
};

/** Annotation keys of the create protocol. */
export const ANNOTATIONS = {
  externalId: "aidc.io/external-id",
  subscriptionKey: "aidc.io/subscription-key",
  createPending: "aidc.io/create-pending",
  /** Generation whose create failed remotely; a newer generation tries again. */
  createFailedGeneration: "aidc.io/create-failed-generation",
  /** When a delete answered "InProgress": observed until gone, not deleted again. */
  deleteRequested: "aidc.io/delete-requested",
} as const;

/** What `aidc.io/create-pending` records: the token, when it was sent, for which generation. */
export interface CreatePending {
  token: string;
  /** RFC 3339. */
  at: string;
  generation: number;
  /** How long after `at` the create may take effect (null: no bound; absent: the reader's). */
  inFlightMs?: number | null;
}

/** The protocol's state, read from annotations. */
export interface CreateState {
  externalId?: string;
  subscriptionKey?: string;
  pending?: CreatePending;
  failedGeneration?: number;
}

/** Reads the protocol state; a malformed create-pending counts as pending with no token. */
export function readCreateState(annotations: Record<string, string> | undefined): CreateState {
  const a = annotations ?? {};
  const state: CreateState = {};
  const externalId = a[ANNOTATIONS.externalId]?.trim();
  if (externalId) state.externalId = externalId;
  const key = a[ANNOTATIONS.subscriptionKey]?.trim();
  if (key) state.subscriptionKey = key;
  const pending = a[ANNOTATIONS.createPending];
  if (pending !== undefined) state.pending = parsePending(pending);
  const failed = Number(a[ANNOTATIONS.createFailedGeneration]);
  if (Number.isInteger(failed) && failed > 0) state.failedGeneration = failed;
  return state;
}

function parsePending(raw: string): CreatePending {
  try {
    const v = JSON.parse(raw) as Partial<CreatePending>;
    const inFlightMs = v.inFlightMs;
    return {
      token: typeof v.token === "string" ? v.token : "",
      at: typeof v.at === "string" ? v.at : "",
      generation: typeof v.generation === "number" ? v.generation : 0,
      ...(inFlightMs === null || (typeof inFlightMs === "number" && inFlightMs >= 0)
        ? { inFlightMs }
        : {}),
    };
  } catch {
    return { token: "", at: "", generation: 0 };
  }
}

export interface InFlightBounds {
  reconcileTimeoutMs?: number | undefined;
  requestTimeoutMs?: number | undefined;
}

/**
 * How long after its marker a create may take effect, under the loop's timeouts: it is sent
 * within its reconcile and the service has the request timeout to act on it. Null: no bound.
 */
export function markerInFlightMs(bounds: InFlightBounds): number | null {
  const reconcileMs = bounds.reconcileTimeoutMs ?? DEFAULT_RECONCILE_TIMEOUT_MS;
  return reconcileMs > 0 ? reconcileMs + (bounds.requestTimeoutMs ?? DEFAULT_TIMEOUT_MS) : null;
}

/** The annotation's text (JSON leaves an undefined `inFlightMs` out). */
export function formatPending({ token, at, generation, inFlightMs }: CreatePending): string {
  return JSON.stringify({ token, at, generation, inFlightMs });
}

export function newClientToken(): string {
  return randomUUID();
}

/** 5xx or refused (400, …) polls in a row that leave a result forgotten (in memory). */
export const FAILED_POLLS_FOR_LOOKUP = 3;

const failedPolls = new Map<string, number>();

/** Whether a poll of `key` failing with `err` (a 404, the Nth 5xx or refusal) leaves the result forgotten. */
export function resultForgotten(objectKey: string, key: string, err: unknown): boolean {
  if (err instanceof ServiceNotFoundError) return true;
  const id = `${objectKey}/${key}`;
  const counts =
    (err instanceof ServiceUnavailableError && (err.code ?? 0) >= 500) ||
    err instanceof ServiceReadRefusedError;
  const failed = counts ? (failedPolls.get(id) ?? 0) + 1 : 0;
  if (failed > 0 && failed < FAILED_POLLS_FOR_LOOKUP) failedPolls.set(id, failed);
  else failedPolls.delete(id);
  return failed >= FAILED_POLLS_FOR_LOOKUP;
}

/** The poll of `key` for `objectKey` was answered: failures before it no longer count. */
export function resultAnswered(objectKey: string, key: string): void {
  failedPolls.delete(`${objectKey}/${key}`);
}

/** The steering annotations (docs/custom-resources.md, "Steering an object"). */
export const STEERING_ANNOTATIONS = {
  /** `"true"`: no service call and no write but the ReconcilePaused condition. */
  paused: "aidc.io/paused",
  /** Any new value: observe now (no list snapshot); echoed in status.lastHandledReconcileAt. */
  reconcileRequestedAt: "aidc.io/reconcile-requested-at",
} as const;

/** What spec.managementPolicies let the loop do (observe always: the CRD requires it). */
export type Policies = Record<
  "observe" | "create" | "update" | "delete" | "lateInitialize",
  boolean
>;

/** The policies of `obj` (`["*"]` when absent). */
export function policiesOf(obj: Managed): Policies {
  const listed = new Set(obj.spec.managementPolicies ?? ["*"]);
  const all = listed.has("*");
  const has = (p: string) => all || listed.has(p);
  return {
    observe: true,
    create: has("Create"),
    update: has("Update"),
    delete: has("Delete"),
    lateInitialize: has("LateInitialize"),
  };
}

/** The policy list as the messages quote it. */
export function policiesText(obj: Managed): string {
  return `[${(obj.spec.managementPolicies ?? ["*"]).join(", ")}]`;
}

/** Any object with a status (a ServiceConnection too). */
type Steered = Pick<Managed, "metadata" | "status">;

/** Whether the object is paused (`aidc.io/paused: "true"`). */
export function isPaused(obj: Steered): boolean {
  return obj.metadata?.annotations?.[STEERING_ANNOTATIONS.paused] === "true";
}

/** `aidc.io/reconcile-requested-at` when it differs from status.lastHandledReconcileAt. */
export function reconcileRequest(obj: Steered): string | undefined {
  const asked = obj.metadata?.annotations?.[STEERING_ANNOTATIONS.reconcileRequestedAt];
  if (asked === undefined || asked === obj.status?.lastHandledReconcileAt) return undefined;
  return asked;
}

/** status.lastHandledReconcileAt outside the loop: the request handled, else the previous. */
export function lastHandled(obj: Steered): { lastHandledReconcileAt?: string } {
  const at = reconcileRequest(obj) ?? obj.status?.lastHandledReconcileAt;
  return at === undefined ? {} : { lastHandledReconcileAt: at };
}

/** Deletion removes the remote resource only with deletionPolicy Delete and the Delete policy. */
export function deletesRemote(obj: Managed): boolean {
  return (obj.spec.deletionPolicy ?? "Orphan") === "Delete" && policiesOf(obj).delete;
}

/** Whether deletionPolicy Delete can be honoured. */
export const DELETION_POLICY_CONDITION = "DeletionPolicy";

/** The part of a kind's client (external-client.ts) that says whether it can delete. */
export interface DeleteCapability {
  deleteConfigured?(): boolean;
}

export function deleteConfigured(client: DeleteCapability): boolean {
  return client.deleteConfigured?.() ?? true;
}

export type DeletionPolicyVerdict =
  | { condition: undefined }
  | { condition: ConditionInput; warn: boolean };

/**
 * The DeletionPolicy condition, so that a user learns in time that a deletion would leave
 * the remote resource behind: none for Orphan; for Delete, True when a delete operation
 * is configured, else False, warned once. `client` is connected only under Delete.
 */
export function deletionPolicyVerdict<T extends Managed>(
  client: () => DeleteCapability,
  obj: T,
): DeletionPolicyVerdict {
  if (!deletesRemote(obj)) return { condition: undefined };
  const previous = obj.status?.conditions?.find(
    (c: Condition) => c.type === DELETION_POLICY_CONDITION,
  );
  const type = DELETION_POLICY_CONDITION;
  if (deleteConfigured(client())) {
    const message = "deleting this object deletes its remote resource";
    return {
      condition: { type, status: "True", reason: "DeletePolicyHonoured", message },
      warn: false,
    };
  }
  const message =
    "deletionPolicy is Delete but no delete operation is configured for this kind: deleting this object would leave its remote resource in the service (orphaned). Configure the kind's delete operation in service.endpoints (docs/install.md, Deleting remote resources) or set spec.deletionPolicy to Orphan";
  const condition = { type, status: "False" as const, reason: "NoDeleteOperation", message };
  return { condition, warn: previous?.status !== "False" };
}

/** What the deletion knows: `createInFlight`, a key or marker without an id. */
export interface DeletionInput {
  policy: "Orphan" | "Delete";
  externalId: string | undefined;
  createInFlight: boolean;
  /** The kind has a delete operation (it may still answer NotConfigured). */
  canDelete: boolean;
}

/** The deletion step; `warn` of Orphan explains a Delete policy that cannot be honoured. */
export type DeletionStep =
  | { step: "Release" }
  | { step: "Orphan"; warn?: string }
  | { step: "Delete"; externalId: string }
  | { step: "WaitForCreate" };

export const NO_DELETE_OPERATION =
  "deletionPolicy is Delete but no delete operation is configured for this kind; the remote resource is left in the service (orphaned)";

/** Orphan leaves what exists; Delete deletes it where possible, after a create in flight ends. */
export function decideDeletion(input: DeletionInput): DeletionStep {
  const { policy, externalId } = input;
  const remote = Boolean(externalId) || input.createInFlight;
  if (policy === "Orphan") return remote ? { step: "Orphan" } : { step: "Release" };
  if (!input.canDelete) {
    return remote ? { step: "Orphan", warn: NO_DELETE_OPERATION } : { step: "Release" };
  }
  if (externalId) return { step: "Delete", externalId };
  if (input.createInFlight) return { step: "WaitForCreate" };
  return { step: "Release" };
}

/**
 * Whether a managed object needs only routine polls: bound, not being deleted, and the
 * last reconcile of this generation found it neither `Creating` nor `Updating`, no error.
 */
export const managedSettled: SettledCheck = (found) => {
  const obj = found as Managed;
  const meta = obj.metadata;
  const annotations = meta?.annotations ?? {};
  if (meta?.deletionTimestamp || annotations[ANNOTATIONS.externalId] === undefined) return false;
  const ready = getCondition(obj.status?.conditions, "Ready");
  const synced = getCondition(obj.status?.conditions, "Synced");
  return (
    ready?.observedGeneration === meta?.generation &&
    ready?.reason !== "Creating" &&
    synced?.observedGeneration === meta?.generation &&
    synced?.status === "True" &&
    synced.reason !== "Updating"
  );
};

/**
 * How a reconcile calls the service: routine when settled; a follow-up (behind other work,
 * outside the routine budget) when settled but Reconciling; else, or `requested`, as work.
 */
export function callsOf(obj: KubeObject, requested: boolean, signal?: AbortSignal): CallContext {
  if (requested || !managedSettled(obj)) return { routine: false, signal };
  const { conditions } = (obj as Managed).status ?? {};
  const underWay = getCondition(conditions, "Reconciling")?.status === "True";
  return underWay ? { routine: false, followUp: true, signal } : { routine: true, signal };
}
