/**
 * What a CciInstance reconcile tells besides its status: the Bound condition of a
 * binding, the events of a change (a failure, a remote status change, a saved image),
 * and on deletion that the instance is kept.
 */
import type { CciInstanceStatus } from "../../crds/cciinstance.js";
import {
  type ConditionInput,
  type EventRecorder,
  type KubeObject,
  type ObjectKey,
  objectKeyString,
} from "../../runtime/index.js";
import { reasonEvents } from "../event-reasons.js";
import { ANNOTATIONS } from "../managed/decisions.js";
import { type Binding, bindingSource, recordedInstanceId } from "./binding.js";
import { imageKey } from "./images.js";
import type { CciObject } from "./objects.js";
import { errorKey } from "./status.js";

/** The Bound condition of `binding`. */
export function boundCondition(binding: Binding): ConditionInput {
  return binding.bound
    ? {
        type: "Bound",
        status: "True",
        reason: "Bound",
        message: `bound to CCI instance ${binding.instanceId} by ${bindingSource(binding.via)}`,
      }
    : { type: "Bound", status: "False", reason: binding.reason, message: binding.message };
}

/** The events of the change from `before` to `after`. */
export function announceChanges(
  recorder: EventRecorder,
  obj: CciObject,
  before: CciInstanceStatus | undefined,
  after: CciInstanceStatus,
): void {
  const events = reasonEvents(recorder);
  const errKey = errorKey(after.error);
  if (errKey && errKey !== errorKey(before?.error)) {
    const e = after.error;
    const text = [e?.description, e?.suggestion && `suggestion: ${e.suggestion}`, e?.detail]
      .filter(Boolean)
      .join("; ");
    events.warning(
      obj,
      "InstanceFailed",
      `CCI instance ${after.instanceId} is ${after.remoteStatus}: ${text}`,
    );
  }
  if (before?.remoteStatus && before.remoteStatus !== after.remoteStatus) {
    events.normal(
      obj,
      "StatusChanged",
      `CCI instance ${after.instanceId}: ${before.remoteStatus} → ${after.remoteStatus}`,
    );
  }
  const was = new Map((before?.images ?? []).map((i) => [imageKey(i), i.state]));
  for (const image of after.images ?? []) {
    if (image.state === "Saved" && was.get(imageKey(image)) !== "Saved") {
      events.normal(obj, "ImageSaved", `image ${imageKey(image)} saved as ${image.imageId ?? "?"}`);
    }
  }
}

/** The last seen identity of each object, to say once on its deletion that its instance is kept. */
export class KeptInstances {
  private readonly seen = new Map<string, { obj: KubeObject; instanceId?: string }>();
  /** The keys of the objects noted bound to each instance id. */
  private readonly byInstance = new Map<string, Map<string, ObjectKey>>();

  /**
   * Notes `obj` (bound to `instanceId`, else to the id it records, else to the one noted
   * before: a copy of the cache older than the binding write records none).
   */
  remember(key: ObjectKey, obj: CciObject, instanceId?: string): void {
    const k = `${key.namespace}/${key.name}`;
    const id =
      instanceId ??
      recordedInstanceId(
        obj.metadata?.annotations?.[ANNOTATIONS.externalId],
        obj.status?.instanceId,
      ) ??
      this.seen.get(k)?.instanceId;
    this.unindex(k);
    this.seen.set(k, {
      obj: { apiVersion: obj.apiVersion, kind: obj.kind, metadata: { ...obj.metadata } },
      ...(id ? { instanceId: id } : {}),
    });
    if (!id) return;
    const keys = this.byInstance.get(id) ?? new Map<string, ObjectKey>();
    this.byInstance.set(id, keys.set(k, { namespace: key.namespace, name: key.name }));
  }

  /**
   * The objects this process bound to `instanceId` (or saw bound), whether or not the
   * cache shows them bound yet: the echo of a binding write may still be on its way.
   */
  boundTo(instanceId: string): ObjectKey[] {
    return [...(this.byInstance.get(instanceId)?.values() ?? [])];
  }

  private unindex(k: string): void {
    const id = this.seen.get(k)?.instanceId;
    const keys = id === undefined ? undefined : this.byInstance.get(id);
    if (keys?.delete(k) && keys.size === 0 && id !== undefined) this.byInstance.delete(id);
  }

  /**
   * Once per deletion: an event that the instance is left as it is. Answers the deleted
   * object's uid ("" when it had none), undefined when the object was not seen.
   */
  reportDeletion(key: ObjectKey, events: EventRecorder): string | undefined {
    const k = `${key.namespace}/${key.name}`;
    const seen = this.seen.get(k);
    if (!seen) return undefined;
    this.unindex(k);
    this.seen.delete(k);
    const what = seen.instanceId
      ? `CCI instance ${seen.instanceId}`
      : "no CCI instance (it was not bound)";
    reasonEvents(events).normal(
      seen.obj,
      "InstanceKept",
      `${objectKeyString(seen.obj)} deleted; ${what} is left untouched: the operator only observes CCI instances`,
    );
    return seen.obj.metadata?.uid ?? "";
  }
}
