/**
 * How a user steers one managed object, read in one place for every managed kind
 * (the dispatcher, reconciler.ts, and the steps it runs): `spec.managementPolicies`
 * (what the loop may do to the remote resource), the annotation `aidc.io/paused`
 * (nothing at all) and `aidc.io/reconcile-requested-at` (a fresh read now).
 * docs/custom-resources.md ("Steering an object") is the user's page.
 *
 * And, from the first reconcile, whether `spec.deletionPolicy: Delete` can be
 * honoured: the `DeletionPolicy` condition (and a Warning event when it turns False),
 * so that a user learns that deleting the object would leave its remote resource in
 * the service while they can still act (configure the delete operation, or choose
 * Orphan), not after the object is gone.
 */
import type { Condition, ConditionInput } from "../../runtime/conditions.js";
import type { ManagedObject } from "./call.js";

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

/**
 * Whether deleting `obj` deletes its remote resource: deletionPolicy Delete and the
 * Delete policy (Crossplane's rule: either one alone orphans).
 */
export function deletesRemote(obj: ManagedObject): boolean {
  return (obj.spec.deletionPolicy ?? "Orphan") === "Delete" && policiesOf(obj).delete;
}

/** Whether the object is paused (`aidc.io/paused: "true"`). */
export function isPaused(obj: ManagedObject): boolean {
  return obj.metadata?.annotations?.[STEERING_ANNOTATIONS.paused] === "true";
}

/**
 * The value of `aidc.io/reconcile-requested-at` when it asks for a reconcile not
 * handled yet (different from status.lastHandledReconcileAt), else undefined.
 */
export function reconcileRequest(obj: ManagedObject): string | undefined {
  const asked = obj.metadata?.annotations?.[STEERING_ANNOTATIONS.reconcileRequestedAt];
  if (asked === undefined || asked === obj.status?.lastHandledReconcileAt) return undefined;
  return asked;
}

/** The Synced condition of a paused object. */
export const PAUSED_SYNCED = {
  type: "Synced",
  status: "False" as const,
  reason: "ReconcilePaused" as const,
  message: `the annotation ${STEERING_ANNOTATIONS.paused} is "true": the operator neither calls the service for this object nor changes it (a deletion waits too) until the annotation is removed`,
};

/** The condition type. */
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
 * The DeletionPolicy condition of `obj`: none for Orphan; for Delete, True when a
 * delete operation is configured and False (`NoDeleteOperation`) otherwise. `client`
 * is connected only under a Delete policy.
 */
export function deletionPolicyVerdict<T extends ManagedObject>(
  client: () => DeleteCapability,
  obj: T,
): DeletionPolicyVerdict {
  // deletionPolicy Orphan, or no Delete in spec.managementPolicies: nothing to say.
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
