/**
 * The pieces of status that the kinds share: the status object itself (with
 * `observedGeneration` and `conditions` first, {@link kindStatus}), the id of the remote
 * resource that the annotation aidc.io/external-id repeats, the service's creation
 * time, and the subscription of a kind created asynchronously. Every status field is
 * optional: the operator writes what it knows.
 */
import { z } from "zod";
import { statusBaseShape, timestamp } from "./conditions.js";
import { described } from "./definition.js";
import { subscriptionSchema } from "./fields.js";

/**
 * The status schema of a kind: {@link statusBaseShape} then `shape`, described as the
 * observed state of `what` (e.g. `the volume`), written by the operator.
 */
export function kindStatus<Shape extends z.ZodRawShape>(what: string, shape: Shape) {
  return z
    .object({ ...statusBaseShape, ...shape })
    .meta({ description: `Observed state of ${what}, written by the operator.` });
}

/** An optional string of the status (most values the service gives). */
export function optionalString(description: string) {
  return described(z.string(), description).optional();
}

/** An optional boolean of the status. */
export function optionalFlag(description: string) {
  return described(z.boolean(), description).optional();
}

/**
 * The id of the remote resource in the service, which the annotation
 * aidc.io/external-id repeats (`what`: e.g. `volume`).
 */
export function externalIdStatus(what: string) {
  return optionalString(
    `Id of the ${what} in the service; also in the annotation aidc.io/external-id.`,
  );
}

/** When the service created the remote resource (`what`: e.g. `volume`). */
export function serviceCreatedTime(what: string) {
  return timestamp(`When the service created the ${what}.`).optional();
}

/**
 * The status fields of a kind the service creates asynchronously: the result key of
 * its subscription (repeated in the annotation aidc.io/subscription-key; `order` names
 * it, e.g. `create subscription`) and the subscription's outcome.
 */
export function subscriptionStatusShape(order: string) {
  return {
    subscriptionKey: optionalString(
      `Result key of the ${order}; also in the annotation aidc.io/subscription-key.`,
    ),
    subscription: subscriptionSchema.optional(),
  };
}

/**
 * The status fields every managed kind shares (spread into its {@link kindStatus}
 * shape): the last `aidc.io/reconcile-requested-at` value the loop handled.
 */
export const managedStatusShape = {
  lastHandledReconcileAt: optionalString(
    "The value of the annotation aidc.io/reconcile-requested-at when the operator last handled it (a fresh read of the remote resource).",
  ),
};

/**
 * The status field of a kind with spec.exportTo (spread at the end of its
 * {@link kindStatus} shape): the ConfigMap name last reconciled, so that the ConfigMap
 * written under it is deleted when the name changes, after a restart too.
 */
export const exportStatusShape = {
  exportedConfigMapName: optionalString(
    "ConfigMap of spec.exportTo.configMapName as last reconciled; when that name changes or is removed, the operator deletes the ConfigMap it wrote under this one (never one it does not own) before recording the new name.",
  ),
};
