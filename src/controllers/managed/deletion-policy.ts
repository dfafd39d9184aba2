/**
 * Saying, from the first reconcile, whether `spec.deletionPolicy: Delete` can be
 * honoured: the `DeletionPolicy` condition (and a Warning event when it turns False),
 * so that a user learns that deleting the object would leave its remote resource in
 * the service while they can still act (configure the delete operation, or choose
 * Orphan), not after the object is gone.
 */
import type { Condition, ConditionInput } from "../../runtime/conditions.js";
import type { ManagedObject } from "./call.js";
import type { KindClient } from "./external-client.js";
import { deletesRemote } from "./policies.js";

/** The condition type. */
export const DELETION_POLICY_CONDITION = "DeletionPolicy";

/** True when the client's delete operation is configured. */
export function deleteConfigured<T extends ManagedObject, R>(client: KindClient<T, R>): boolean {
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
export function deletionPolicyVerdict<T extends ManagedObject, R>(
  client: () => KindClient<T, R>,
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
