/**
 * What the managed loop reads from an object's own fields, as pure decisions: the user's
 * steering (`spec.managementPolicies`, `aidc.io/paused`, `aidc.io/reconcile-requested-at`;
 * docs/custom-resources.md, "Steering an object"), its deletion policy, whether it is
 * settled (only routine polls due) and so how its calls go, and how soon to look again.
 */

import type { SettledCheck } from "../../runtime/controller.js";
import { type Condition, type ConditionInput, getCondition } from "../../runtime/object-writes.js";
import type { KubeObject } from "../../runtime/resource.js";
import type { CallContext } from "../../service/call-context.js";
import type { ManagedObject } from "./call.js";
import { ANNOTATIONS } from "./create-protocol.js";

/** The steering annotations. */
export const STEERING_ANNOTATIONS = {
  /** `"true"`: no service call and no write but the ReconcilePaused condition. */
  paused: "aidc.io/paused",
  /** Any new value: observe now (no list snapshot); echoed in status.lastHandledReconcileAt. */
  reconcileRequestedAt: "aidc.io/reconcile-requested-at",
} as const;

/** What the loop may do to an object's remote resource. */
export interface Policies {
  /** Read it (always true: the CRD refuses a list without Observe). */
  observe: boolean;
  /** Order it when the object has no remote resource. */
  create: boolean;
  /** Correct drift (the kind's `update`: a change, a scale, a mount, an attach). */
  update: boolean;
  /** Delete it with the object (together with deletionPolicy Delete). */
  delete: boolean;
  /** Fill unset spec fields from it (the kind's `lateInitialize`). */
  lateInitialize: boolean;
}

/** The policies of `obj` (`["*"]` when the field is absent). */
export function policiesOf(obj: ManagedObject): Policies {
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
export function policiesText(obj: ManagedObject): string {
  return `[${(obj.spec.managementPolicies ?? ["*"]).join(", ")}]`;
}

/** Why a deletion orphans: the deletion policy, or the management policies without Delete. */
export function orphanCause(obj: ManagedObject): string {
  return (obj.spec.deletionPolicy ?? "Orphan") === "Orphan"
    ? "deletionPolicy Orphan"
    : `spec.managementPolicies ${policiesText(obj)} has no Delete`;
}

/** What the steering annotations are read from: any object with a status (a ServiceConnection too). */
type Steered = Pick<ManagedObject, "metadata" | "status">;

/** Whether the object is paused (`aidc.io/paused: "true"`). */
export function isPaused(obj: Steered): boolean {
  return obj.metadata?.annotations?.[STEERING_ANNOTATIONS.paused] === "true";
}

/**
 * The value of `aidc.io/reconcile-requested-at` when it asks for a reconcile not
 * handled yet (different from status.lastHandledReconcileAt), else undefined.
 */
export function reconcileRequest(obj: Steered): string | undefined {
  const asked = obj.metadata?.annotations?.[STEERING_ANNOTATIONS.reconcileRequestedAt];
  if (asked === undefined || asked === obj.status?.lastHandledReconcileAt) return undefined;
  return asked;
}

/**
 * status.lastHandledReconcileAt of a reconcile of `obj` outside the managed loop: the
 * request it handles ({@link reconcileRequest}), else the one handled before.
 */
export function lastHandled(obj: Steered): { lastHandledReconcileAt?: string } {
  const at = reconcileRequest(obj) ?? obj.status?.lastHandledReconcileAt;
  return at === undefined ? {} : { lastHandledReconcileAt: at };
}

/**
 * The Synced condition of a paused object; `holdsDeletion`: a finalizer keeps a deleted
 * object until it is resumed (not a CciInstance, which has none, nor an unused
 * ServiceConnection).
 */
export function pausedSynced(holdsDeletion = true) {
  const deletion = holdsDeletion ? " (a deletion waits too)" : "";
  return {
    type: "Synced",
    status: "False" as const,
    reason: "ReconcilePaused" as const,
    message: `the annotation ${STEERING_ANNOTATIONS.paused} is "true": the operator neither calls the service for this object nor changes it${deletion} until the annotation is removed`,
  };
}

/**
 * The Ready condition of an object paused before the operator reported one: False, so
 * that kstatus (Flux) waits instead of reading an object whose resource may not exist
 * as Current; Argo CD shows Suspended.
 */
export const PAUSED_READY = {
  type: "Ready",
  status: "False" as const,
  reason: "ReconcilePaused" as const,
  message: `paused before the operator read or created the remote resource: the annotation ${STEERING_ANNOTATIONS.paused} is "true"`,
};

/**
 * Whether deleting `obj` deletes its remote resource: deletionPolicy Delete and the
 * Delete policy (Crossplane's rule: either one alone orphans).
 */
export function deletesRemote(obj: ManagedObject): boolean {
  return (obj.spec.deletionPolicy ?? "Orphan") === "Delete" && policiesOf(obj).delete;
}

/** The condition type that says whether deletionPolicy Delete can be honoured. */
export const DELETION_POLICY_CONDITION = "DeletionPolicy";

/** The part of a kind's client (external-client.ts) that says whether it can delete. */
export interface DeleteCapability {
  deleteConfigured?(): boolean;
}

/** True when the client's delete operation is configured. */
export function deleteConfigured(client: DeleteCapability): boolean {
  return client.deleteConfigured?.() ?? true;
}

/** What to do with the condition on a write of the status of a live object. */
export type DeletionPolicyVerdict =
  /** Policy Orphan: the condition has nothing to say (removed). */
  | { condition: undefined }
  /** Policy Delete: the condition, and whether it newly turned False (warn once). */
  | { condition: ConditionInput; warn: boolean };

/**
 * The DeletionPolicy condition of a live `obj`, so that a user learns while they can
 * still act that deleting it would leave its remote resource behind: none for Orphan;
 * for Delete, True when a delete operation is configured and False
 * (`NoDeleteOperation`) otherwise. `client` is connected only under a Delete policy.
 */
export function deletionPolicyVerdict<T extends ManagedObject>(
  client: () => DeleteCapability,
  obj: T,
): DeletionPolicyVerdict {
  if (!deletesRemote(obj)) return { condition: undefined };
  const previous = obj.status?.conditions?.find(
    (c: Condition) => c.type === DELETION_POLICY_CONDITION,
  );
  if (deleteConfigured(client())) {
    return {
      condition: {
        type: DELETION_POLICY_CONDITION,
        status: "True",
        reason: "DeletePolicyHonoured",
        message: "deleting this object deletes its remote resource",
      },
      warn: false,
    };
  }
  const message =
    "deletionPolicy is Delete but no delete operation is configured for this kind: deleting this object would leave its remote resource in the service (orphaned). Configure the delete operation (docs/install.md) or set spec.deletionPolicy to Orphan";
  return {
    condition: {
      type: DELETION_POLICY_CONDITION,
      status: "False",
      reason: "NoDeleteOperation",
      message,
    },
    warn: previous?.status !== "False",
  };
}

/** What is known about the remote resource when the object is being deleted. */
export interface DeletionInput {
  policy: "Orphan" | "Delete";
  externalId: string | undefined;
  /** A create was sent and has not resolved to an id yet (key or pending marker). */
  createInFlight: boolean;
  /** The kind has a delete operation (it may still answer NotConfigured). */
  canDelete: boolean;
}

/** The deletion step. */
export type DeletionStep =
  /** Nothing remote to act on: remove the finalizer. */
  | { step: "Release" }
  /** Leave the remote resource; `warn` explains a Delete policy that cannot be honoured. */
  | { step: "Orphan"; warn?: string }
  /** Run the kind's steps before deletion, delete, and release once it is gone. */
  | { step: "Delete"; externalId: string }
  /** A create is in flight under a Delete policy: learn its id before deleting. */
  | { step: "WaitForCreate" };

/** Message of a Delete policy the kind cannot honour. */
export const NO_DELETE_OPERATION =
  "deletionPolicy is Delete but no delete operation is configured for this kind; the remote resource is left in the service (orphaned)";

/**
 * Decides the deletion step: Orphan leaves whatever exists; Delete deletes a known
 * resource where possible, otherwise orphans it with a warning, and first waits for an
 * in-flight create so that a resource being created is not leaked.
 */
export function decideDeletion(input: DeletionInput): DeletionStep {
  const { policy, externalId } = input;
  if (policy === "Orphan") {
    return externalId || input.createInFlight ? { step: "Orphan" } : { step: "Release" };
  }
  if (!input.canDelete) {
    return externalId || input.createInFlight
      ? { step: "Orphan", warn: NO_DELETE_OPERATION }
      : { step: "Release" };
  }
  if (externalId) return { step: "Delete", externalId };
  if (input.createInFlight) return { step: "WaitForCreate" };
  return { step: "Release" };
}

/**
 * Whether a managed object needs only routine polls, from the cache alone: bound (an
 * id), not being deleted, and the last reconcile of this generation
 * found it neither coming up (`Creating`) nor waiting for a change (`Updating`), without
 * an error. A finished or stopped task (`TaskSucceeded`, `TaskStopped`) is settled.
 */
export const managedSettled: SettledCheck = (found) => {
  const obj = found as ManagedObject;
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
 * How a reconcile of `obj` calls the service: as routine observation when it is
 * settled; as a follow-up (behind other work, outside the routine budget) when settled
 * but `Reconciling=True` says work is still under way; as work otherwise, and always
 * when the user `requested` the reconcile. `signal` aborts its calls.
 */
export function callsOf(obj: KubeObject, requested: boolean, signal?: AbortSignal): CallContext {
  if (requested || !managedSettled(obj)) return { routine: false, signal };
  const { conditions } = (obj as ManagedObject).status ?? {};
  const underWay = getCondition(conditions, "Reconciling")?.status === "True";
  return underWay ? { routine: false, followUp: true, signal } : { routine: true, signal };
}

/** Default first poll of a pending subscription. */
export const DEFAULT_SUBSCRIPTION_POLL_MS = 1_000;

/** The first poll of a pending subscription: the loop's `subscriptionPollMs`, else the default. */
export function firstSubscriptionPollMs(options: { subscriptionPollMs?: number }): number {
  return options.subscriptionPollMs ?? DEFAULT_SUBSCRIPTION_POLL_MS;
}

/**
 * The requeue delay while a subscription is pending: half its age (so the delay
 * doubles as the wait goes on), at least `firstMs`, at most `maxMs`. An unknown age
 * (NaN) polls after `firstMs`.
 */
export function subscriptionPollDelay(ageMs: number, firstMs: number, maxMs: number): number {
  if (!Number.isFinite(ageMs) || ageMs < 0) return Math.min(firstMs, maxMs);
  return Math.min(Math.max(firstMs, Math.round(ageMs / 2)), Math.max(firstMs, maxMs));
}

/** {@link subscriptionPollDelay} from the options' first subscription poll up to their poll interval. */
export function agingPollMs(
  ageMs: number,
  options: { pollIntervalMs: number; subscriptionPollMs?: number },
): number {
  return subscriptionPollDelay(ageMs, firstSubscriptionPollMs(options), options.pollIntervalMs);
}

/**
 * The requeue while something should end soon (a resource coming up, a change or a
 * deletion waiting): five first subscription polls, at most the poll interval.
 */
export function soonPollMs(options: { pollIntervalMs: number; subscriptionPollMs?: number }) {
  return Math.min(options.pollIntervalMs, 5 * firstSubscriptionPollMs(options));
}
