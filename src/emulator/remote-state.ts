/**
 * Changing the remote state of emulated resources, as the real service would on its
 * own: a task finishing or failing, a NAS filling up, a CCI instance stopping or
 * failing, a volume attached elsewhere, a subscription resolving early or failing. Used by the admin API.
 */
import { z } from "zod";
import { createPods } from "./pods.js";
import { cciErrorDetailsPatchSchema } from "./seeding.js";
import type { EmulatorState } from "./state.js";

/** A change of a task: status (with an execution record), a container's state. */
export const taskPatchSchema = z.strictObject({
  status: z.string().optional(),
  /** Text of the execution record added with a status change. */
  info: z.string().optional(),
  restartCount: z.int().min(0).optional(),
  containerReason: z.string().optional(),
});

/** A change of a NAS: status, used GB, quota GB, description. */
export const nasPatchSchema = z.strictObject({
  status: z.string().optional(),
  usedGB: z.int().min(0).optional(),
  quotaGB: z.int().positive().optional(),
  description: z.string().optional(),
});

/** A change of a block volume: status, the instance it is attached to (null: none). */
export const volumePatchSchema = z.strictObject({
  status: z.string().optional(),
  instanceId: z.string().min(1).nullable().optional(),
});

/** A change of a CCI instance: any wire fields, error details (null clears), image saving. */
export const cciPatchSchema = z.strictObject({
  status: z.string().optional(),
  subStatus: z.string().optional(),
  fields: z.record(z.string(), z.unknown()).optional(),
  errorDetails: cciErrorDetailsPatchSchema.nullable().optional(),
  /** false ends a running image save now. */
  saveImageStatus: z.boolean().optional(),
});

/** Forcing a subscription's outcome now. */
export const subscriptionPatchSchema = z.strictObject({
  state: z.enum(["Succeeded", "Failed"]),
  message: z.string().optional(),
});

/** Thrown for an unknown id; the admin API answers 404. */
export class UnknownResourceError extends Error {}

/** Thrown for a change the resource's state does not allow; the admin API answers 409. */
export class RemoteStateConflictError extends Error {}

function need<T>(value: T | undefined, what: string, id: string): T {
  if (value === undefined) throw new UnknownResourceError(`${what} ${id} not found`);
  return value;
}

/** Applies a task patch. A task set to RUNNING without pods gets them. */
export function patchTask(state: EmulatorState, id: string, input: unknown): void {
  const patch = taskPatchSchema.parse(input);
  const task = need(state.tasks.get(id), "training task", id);
  const now = state.now();
  if (patch.status !== undefined && patch.status !== task.status) {
    task.status = patch.status;
    task.execInfos.push({
      status: patch.status,
      info: patch.info ?? `status set to ${patch.status}`,
      at: now,
    });
    if (task.execInfos.length > 50) task.execInfos.splice(0, task.execInfos.length - 50);
    if (patch.status === "RUNNING" && task.pods.length === 0) {
      task.startedAt = now;
      task.pods = createPods(task, state);
    }
  }
  for (const pod of task.pods) {
    for (const c of pod.containers) {
      if (patch.restartCount !== undefined) c.restartCount = patch.restartCount;
      if (patch.containerReason !== undefined) c.reason = patch.containerReason;
    }
  }
  task.updatedAt = now;
}

/** Applies a NAS patch. */
export function patchNas(state: EmulatorState, id: string, input: unknown): void {
  const patch = nasPatchSchema.parse(input);
  const nas = need(state.nas.get(id), "NAS storage instance", id);
  if (patch.status !== undefined) nas.status = patch.status;
  if (patch.usedGB !== undefined) nas.usedGB = patch.usedGB;
  if (patch.quotaGB !== undefined) nas.quotaGB = patch.quotaGB;
  if (patch.description !== undefined) nas.description = patch.description;
  nas.updatedAt = state.now();
}

/** Applies a volume patch (e.g. someone else attaching it elsewhere). */
export function patchVolume(state: EmulatorState, id: string, input: unknown): void {
  const patch = volumePatchSchema.parse(input);
  need(state.volumes.records.get(id), "volume", id);
  state.volumes.patch(id, patch);
}

/** Applies a CCI patch. */
export function patchCci(state: EmulatorState, id: string, input: unknown): void {
  const patch = cciPatchSchema.parse(input);
  const cci = need(state.cci.get(id), "CCI instance", id);
  cci.fields = {
    ...cci.fields,
    ...(patch.fields ?? {}),
    ...(patch.status === undefined ? {} : { status: patch.status }),
    ...(patch.subStatus === undefined ? {} : { subStatus: patch.subStatus }),
    updateTime: new Date(state.now()).toISOString().slice(0, 19).replace("T", " "),
  };
  if (patch.errorDetails === null) delete cci.errorDetails;
  else if (patch.errorDetails !== undefined) cci.errorDetails = patch.errorDetails;
  if (patch.saveImageStatus === false) cci.savingImageUntil = 0;
  if (patch.saveImageStatus === true) cci.savingImageUntil = Number.MAX_SAFE_INTEGER;
}

/**
 * Resolves a subscription now with the given outcome (a forced failure removes its
 * resource, or leaves it half made: failedOrdersLeaveResources).
 */
export function patchSubscription(state: EmulatorState, key: string, input: unknown): void {
  const patch = subscriptionPatchSchema.parse(input);
  const sub = need(state.subscriptions.get(key), "subscription", key);
  if (sub.resolved && sub.outcome === patch.state) return;
  if (sub.resolved && sub.outcome === "Failed") {
    throw new RemoteStateConflictError(`subscription ${key} has already failed; it cannot change`);
  }
  if (patch.state === "Succeeded" && sub.instanceId === undefined) {
    throw new RemoteStateConflictError(
      `subscription ${key} was refused at acceptance (${sub.message ?? "no resource"}); it cannot succeed`,
    );
  }
  sub.outcome = patch.state;
  if (patch.message !== undefined) sub.message = patch.message;
  state.resolve(sub);
}
