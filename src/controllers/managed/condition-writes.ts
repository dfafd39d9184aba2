/**
 * The status writes of a managed object that change only its conditions (the kstatus
 * conditions follow), where a reconcile has no new status fields to record: a paused
 * object, a deletion that waits (also for the user: {@link unknownOnDelete}), and the loop's error policy after a failed reconcile
 * with the Synced and Ready conditions of the failure.
 */

import { REASONS } from "../../crds/index.js";
import type { ErrorPolicy, ReconcileContext, ReconcileResult } from "../../runtime/controller.js";
import {
  ConflictError,
  errorReason,
  failureMessage,
  isExternalHold,
} from "../../runtime/errors.js";
import {
  type Condition,
  type ConditionInput,
  conditionMessage,
  getCondition,
  patchStatus,
  setCondition,
  withKstatusConditions,
} from "../../runtime/object-writes.js";
import { failedSyncCondition } from "../health-conditions.js";
import type { ManagedObject, ReferenceResolution } from "./call.js";
import { MAX_LOOKUP_INTERVAL_MS } from "./create-recovery.js";
import {
  ANNOTATIONS,
  type DeleteCapability,
  deletionPolicyVerdict,
  STEERING_ANNOTATIONS,
} from "./decisions.js";
import type { ManagedKind } from "./external-client.js";

/**
 * An object deleted under deletionPolicy Delete whose create's outcome cannot be known
 * (`why`): Ready and Synced False CreateOutcomeUnknown say how to go on (a Warning by
 * `warn` when new), looked at again after {@link MAX_LOOKUP_INTERVAL_MS}. It keeps its
 * finalizer until the user binds what the create made (deleted then) or sets Orphan.
 */
export async function unknownOnDelete<T extends ManagedObject>(
  ctx: ReconcileContext,
  kind: ManagedKind<T, unknown>,
  obj: T,
  why: string,
  warn: (reason: "CreateOutcomeUnknown", message: string) => void,
): Promise<ReconcileResult> {
  const ref = `${kind.resource.kind.toLowerCase()}/${obj.metadata?.name ?? ""}`;
  const message = `${why}. Deletion waits so that nothing is left behind: if the resource exists, set the annotation ${ANNOTATIONS.externalId} to its id and it is deleted (kubectl annotate ${ref} ${ANNOTATIONS.externalId}=<id>); to leave the service as it is, set spec.deletionPolicy to Orphan (kubectl patch ${ref} --type merge -p '{"spec":{"deletionPolicy":"Orphan"}}')`;
  const prev = getCondition(obj.status?.conditions, "Ready");
  if (prev?.message !== conditionMessage(message)) warn("CreateOutcomeUnknown", message);
  const cond = { status: "False" as const, reason: "CreateOutcomeUnknown" as const, message };
  await writeConditions(ctx, kind, obj, [
    { type: "Ready", ...cond },
    { type: "Synced", ...cond },
  ]);
  return { requeueAfterMs: MAX_LOOKUP_INTERVAL_MS };
}

/** The part of a kind the conditions-only writes need: its resource (and finalizer). */
type KindResource<T extends ManagedObject> = Pick<ManagedKind<T, unknown>, "resource"> & {
  finalizer?: string;
};

/** Sets conditions on `obj`'s current status and patches it when it changed. */
export async function writeConditions<T extends ManagedObject>(
  ctx: ReconcileContext,
  kind: KindResource<T>,
  obj: T,
  conds: Parameters<typeof setCondition>[1][],
): Promise<void> {
  const generation = obj.metadata?.generation;
  let conditions = obj.status?.conditions;
  for (const c of conds) conditions = setCondition(conditions, c, generation, ctx.clock.now());
  conditions = withKstatusConditions(conditions, REASONS, generation, ctx.clock.now());
  await patchStatus(ctx.kube, kind.resource, obj, { ...(obj.status ?? {}), conditions });
}

/**
 * The Synced condition of a paused object; `holdsDeletion`: a finalizer keeps a deleted
 * object until it is resumed (not a CciInstance, nor an unused ServiceConnection).
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
 * that kstatus (Flux) waits instead of reading it as Current; Argo CD shows Suspended.
 */
export const PAUSED_READY = {
  type: "Ready",
  status: "False" as const,
  reason: "ReconcilePaused" as const,
  message: `paused before the operator read or created the remote resource: the annotation ${STEERING_ANNOTATIONS.paused} is "true"`,
};

/**
 * A paused object (decisions.ts): Synced=False ReconcilePaused (and Ready=False
 * ReconcilePaused when it has no Ready yet), written once, and no requeue; removing the
 * annotation is a change that enqueues the object at once. Also the pause of a kind
 * outside the loop (CciInstance), with its resource as `kind` and no finalizer.
 */
export async function paused<T extends ManagedObject>(
  ctx: ReconcileContext,
  kind: KindResource<T>,
  obj: T,
): Promise<ReconcileResult> {
  const synced = getCondition(obj.status?.conditions, "Synced");
  const ready = getCondition(obj.status?.conditions, "Ready");
  const want = pausedSynced(kind.finalizer !== undefined);
  const written =
    synced?.reason === want.reason &&
    synced.status === want.status &&
    synced.observedGeneration === (obj.metadata?.generation ?? 0) &&
    ready !== undefined;
  if (!written) {
    await writeConditions(ctx, kind, obj, [want, ...(ready ? [] : [PAUSED_READY])]);
  }
  return {};
}

/**
 * The Ready condition while a reconcile fails for a reason outside the object (an
 * external hold: the API key refused, a missing operation, an answer of an unknown
 * shape), or undefined to leave Ready as it is (any other failure). What was true
 * cannot be vouched for any more: Ready=True becomes Unknown; an object without Ready
 * (new) or not Ready gets Ready=False; both with the error's reason and message, and
 * when it is tried again (`failureMessage`).
 */
export function heldReadyCondition(
  err: unknown,
  previous: Condition | undefined,
): ConditionInput | undefined {
  if (!isExternalHold(err)) return undefined;
  return {
    type: "Ready",
    status: previous?.status === "True" || previous?.status === "Unknown" ? "Unknown" : "False",
    reason: errorReason(err, "ReconcileTerminal"),
    message: failureMessage(err),
  };
}

/**
 * The error policy of `kind`'s loop: Synced=False with the error's reason and message;
 * Ready too for a failure outside the object (`heldReadyCondition`); and, for a live
 * object, the DeletionPolicy condition, asking `client` (the object's client, outside
 * any reconcile) whether it can delete: none when the object's connection is what
 * fails, since nothing can be said about its delete operation then.
 */
export function managedErrorPolicy<T extends ManagedObject, R>(
  kind: ManagedKind<T, R>,
  client: (obj: T) => DeleteCapability,
): ErrorPolicy {
  const policyOf = (obj: T) => {
    try {
      return deletionPolicyVerdict(() => client(obj), obj).condition;
    } catch {
      return undefined;
    }
  };
  return async (_key, err, ctx, found) => {
    // A conflict only means the cache was behind a write; the retry follows at once,
    // so it is not worth a Synced=False flap.
    if (err instanceof ConflictError) return;
    const obj = found as T | undefined;
    if (!obj) return;
    const deleting = Boolean(obj.metadata?.deletionTimestamp);
    const ready = deleting
      ? undefined
      : heldReadyCondition(err, getCondition(obj.status?.conditions, "Ready"));
    const policy = deleting ? undefined : policyOf(obj);
    await writeConditions(ctx, kind, obj, [
      failedSyncCondition(err),
      ...(ready ? [ready] : []),
      ...(policy ? [policy] : []),
    ]);
  };
}

/** The ReferencesResolved condition of the reference step's answer (run.ts). */
export function referencesCondition(resolution: ReferenceResolution<unknown>): ConditionInput {
  return resolution.resolved
    ? { type: "ReferencesResolved", status: "True", reason: "Resolved", message: "" }
    : {
        type: "ReferencesResolved",
        status: "False",
        reason: resolution.reason,
        message: resolution.message,
      };
}
