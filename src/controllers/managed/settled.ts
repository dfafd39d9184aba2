/**
 * The managed loop's judgement of a settled object (one that needs only routine polls),
 * from the object alone: the queue lane of its key, whether its poll may be answered
 * from the kind's list (observe.ts), and how a reconcile of it calls the service
 * (run.ts): routine observation takes the routine budget, a follow-up does not.
 */
import { getCondition } from "../../runtime/conditions.js";
import type { SettledCheck } from "../../runtime/controller.js";
import type { KubeObject } from "../../runtime/resource.js";
import type { CallContext } from "../../service/call-context.js";
import type { ManagedObject } from "./call.js";
import { fromKube } from "./call.js";
import { ANNOTATIONS } from "./create-protocol.js";

/**
 * Whether a managed object needs only routine polls, from the cache alone: bound to
 * its remote resource (an id, no create pending), not being deleted, and the last
 * reconcile of this generation found it neither coming up (`Creating`) nor waiting for
 * a change (`Updating`), without an error. A finished or stopped task (Ready=True
 * `TaskSucceeded`, Ready=False `TaskStopped`) is settled; an object being created,
 * changed or deleted is not.
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

/**
 * How a reconcile of `obj` calls the service: as routine observation when the object
 * is settled (see {@link managedSettled}) and nothing on it is under way; as a
 * follow-up (behind other work, outside the routine budget) when it is settled but a
 * condition still says work is under way (`Reconciling=True`, e.g. a TrainingJob whose
 * pods are read after its first look); as work otherwise, and always when the user
 * asked for the reconcile (`requested`, policies.ts). `signal` aborts its calls.
 */
export function callsOf(obj: KubeObject, requested: boolean, signal?: AbortSignal): CallContext {
  if (requested || !managedSettled(obj)) return { routine: false, signal };
  const { conditions } = fromKube<ManagedObject>(obj).status ?? {};
  const underWay = getCondition(conditions, "Reconciling")?.status === "True";
  return underWay ? { routine: false, followUp: true, signal } : { routine: true, signal };
}
