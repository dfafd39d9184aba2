/**
 * The managed loop's judgement of a settled object (one that needs only routine polls),
 * from the object alone: the queue lane of its key, and whether its poll may be
 * answered from the kind's list (observe.ts).
 */
import { getCondition } from "../../runtime/conditions.js";
import type { SettledCheck } from "../../runtime/controller.js";
import type { ManagedObject } from "./call.js";
import { ANNOTATIONS } from "./create-protocol.js";
import { fromKube } from "./kube-casts.js";

/**
 * Whether a managed object needs only routine polls, from the cache alone: bound to
 * its remote resource (an id, no create pending), not being deleted, and the last
 * reconcile of this generation found it neither coming up (`Creating`) nor waiting for
 * a change (`Updating`), without an error. A finished task (Ready=False
 * `TaskSucceeded`) is settled; an object being created, changed or deleted is not.
 */
export const managedSettled: SettledCheck = (found) => {
  const obj = fromKube<ManagedObject>(found);
  const meta = obj.metadata;
  const annotations = meta?.annotations ?? {};
  if (meta?.deletionTimestamp || annotations[ANNOTATIONS.createPending] !== undefined) {
    return false;
  }
  if (annotations[ANNOTATIONS.externalId] === undefined) return false;
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
