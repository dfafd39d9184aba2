/**
 * The deletion half of the managed loop: honour `spec.deletionPolicy`, then remove the
 * finalizer. Under Delete, as crossplane-runtime: `beforeDelete`, then `delete`; an
 * "InProgress" answer is recorded (`aidc.io/delete-requested`) and the resource observed
 * until gone (a read failing with a 500: the list tells, gone-evidence.ts); a refused delete
 * is sent again while it shows. Waits are Ready=False `Deleting` with a requeue; a create in
 * flight whose outcome cannot be known waits as `CreateOutcomeUnknown` for the user.
 */
import type { ConditionReason } from "../../crds/reasons.js";
import type { ReconcileResult } from "../../runtime/controller.js";
import { errorMessage } from "../../runtime/errors.js";
import { removeFinalizer } from "../../runtime/lifecycle-writes.js";
import {
  EndpointDisabledError,
  isServiceFailureAnswer,
  ServiceNotFoundError,
} from "../../service/errors.js";
import type { EventReason } from "../event-reasons.js";
import type { BeforeDeleteResult, DeleteResult, ManagedObject } from "./call.js";
import { unknownOnDelete, writeConditions } from "./condition-writes.js";
import {
  createInFlightMs,
  decideAfterLookup,
  inFlightMarks,
  lookupKeyOf,
  resultLeftEmpty,
} from "./create-recovery.js";
import {
  ANNOTATIONS,
  decideDeletion,
  deleteConfigured,
  deletesRemote,
  NO_DELETE_OPERATION,
  policiesText,
  resultAnswered,
  resultForgotten,
} from "./decisions.js";
import type { ManagedOptions } from "./external-client.js";
import { absentListings, goneByList, notShownYet, visibilityWindowMs } from "./gone-evidence.js";
import { noteReleased, wasReleased } from "./released-objects.js";
import {
  agingPollMs,
  ERR,
  type ManagedRun,
  step as runStep,
  soonPollMs,
  wrapError,
} from "./run.js";
import { type BindingRefusal, bindingConflict, ownershipRefusal } from "./tenancy.js";

/** Reason of the Warning event when a Delete policy cannot be honoured. */
export const DELETE_NOT_HONOURED = "DeletePolicyNotHonoured" as const;

/** Why a deletion orphans: the deletion policy, or the management policies without Delete. */
export function orphanCause(obj: ManagedObject): string {
  return (obj.spec.deletionPolicy ?? "Orphan") === "Orphan"
    ? "deletionPolicy Orphan"
    : `spec.managementPolicies ${policiesText(obj)} has no Delete`;
}

/** What the release of an object says: a Normal or Warning Event's reason and note. */
type Said = [type: "normal" | "warning", reason: EventReason, note: string];
const deleted = (id: string): Said => ["normal", "Deleted", `deleted the remote resource ${id}`];

/** Removes the finalizer, then records `said` (not again at each try admission refuses). */
async function release<T extends ManagedObject, R>(run: ManagedRun<T, R>, said?: Said) {
  await removeFinalizer(run.ctx.kube, run.kind.resource, run.obj, run.kind.finalizer);
  noteReleased(run.obj.metadata?.uid, run.ctx.clock.now().getTime());
  if (said) run[said[0]](said[1], said[2]);
  return {};
}

async function waiting<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  message: string,
  requeueAfterMs: number,
  reason: ConditionReason = "Deleting",
): Promise<ReconcileResult> {
  await writeConditions(run.ctx, run.kind, run.obj, [
    { type: "Ready", status: "False", reason, message },
  ]);
  return { requeueAfterMs };
}

/** Handles an object with a deletionTimestamp that still carries the finalizer. */
export async function deleteStep<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  options: ManagedOptions,
): Promise<ReconcileResult> {
  // A stale copy of an object this process has released (released-objects.ts).
  if (wasReleased(run.obj.metadata?.uid, run.ctx.clock.now().getTime())) return {};
  const { state } = run;
  const externalId = state.externalId ?? run.adoptId;
  const step = decideDeletion({
    policy: deletesRemote(run.obj) ? "Delete" : "Orphan",
    externalId,
    createInFlight: !externalId && Boolean(state.subscriptionKey || state.pending),
    canDelete: deleteConfigured(run.client),
  });
  switch (step.step) {
    case "Release":
      return release(run);
    case "Orphan": {
      if (step.warn) {
        const made = `: whatever the create in flight${inFlightMarks(state)} makes`;
        return release(run, ["warning", DELETE_NOT_HONOURED, step.warn + (externalId ? "" : made)]);
      }
      const left = externalId
        ? `left the remote resource ${externalId} in the service`
        : `a create was in flight${inFlightMarks(state)}; whatever it creates is left in the service`;
      return release(run, ["normal", "Orphaned", `${left} (${orphanCause(run.obj)})`]);
    }
    case "Delete": {
      if (run.obj.metadata?.annotations?.[ANNOTATIONS.deleteRequested] !== undefined) {
        return untilGone(run, step.externalId, options);
      }
      const guard = await deleteRefusal(run, step.externalId, options);
      if (guard) {
        const note = `not deleting ${step.externalId}: ${guard.message}; the object is released and the remote resource left as it is`;
        return release(run, ["warning", DELETE_NOT_HONOURED, note]);
      }
      return deleteRemote(run, step.externalId, options);
    }
    case "WaitForCreate":
      return resolveInFlightCreate(run, options);
  }
}

/** The kind's steps before deletion, then `delete`; see the module comment. */
async function deleteRemote<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  id: string,
  options: ManagedOptions,
): Promise<ReconcileResult> {
  const { client } = run;
  const before = client.beforeDelete;
  if (before) {
    // The kind's references as they resolve now (e.g. which attachment the spec asks for).
    if (!run.resolution) run.resolveReferences(true);
    let answer: BeforeDeleteResult;
    try {
      answer = await before.call(client, run.call, id);
    } catch (err) {
      const listed = await goneByList(run, id, err, options, ERR.beforeDelete, true);
      if (listed === undefined) throw wrapError(ERR.beforeDelete, err);
      if (listed !== "Gone") return waiting(run, listed, soonPollMs(options));
      return release(run, deleted(id));
    }
    if (answer !== "Done") {
      const wait = answer.requeueAfterMs ?? soonPollMs(options);
      return waiting(run, answer.waiting, wait, answer.reason);
    }
  }
  let result: DeleteResult;
  try {
    result = await client.delete(run.call, id);
  } catch (err) {
    if (err instanceof ServiceNotFoundError) {
      // A resource just ordered may be unknown to the service yet (Ready stays Creating).
      const unseen = notShownYet(run, id, options);
      if (unseen) return waiting(run, `to delete: ${unseen}`, soonPollMs(options), "Creating");
      result = "Deleted";
    } else if (err instanceof EndpointDisabledError) result = "NotConfigured";
    else if (isServiceFailureAnswer(err)) return untilGone(run, id, options, err);
    else throw wrapError(ERR.delete, err);
  }
  if (result === "NotConfigured") {
    return release(run, ["warning", DELETE_NOT_HONOURED, NO_DELETE_OPERATION]);
  }
  if (result === "Deleted") {
    return release(run, deleted(id));
  }
  // Recorded, so that later reconciles observe instead of deleting again.
  await run.annotate({ [ANNOTATIONS.deleteRequested]: run.ctx.clock.now().toISOString() });
  return untilGone(run, id, options);
}

/**
 * Removes the finalizer once `exists` (else `observe`) says `id` is gone (a 404, or absent
 * from the list where the read fails), else waits: soon after an accepted delete, longer
 * after one `refused` (sent again). A failing observe keeps the finalizer (Synced=False).
 */
async function untilGone<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  id: string,
  options: ManagedOptions,
  refused?: Error,
): Promise<ReconcileResult> {
  let exists: boolean;
  try {
    const { client } = run;
    exists = client.exists
      ? await client.exists(run.call, id)
      : (await client.observe(run.call, id)).exists;
    run.forgetAbsences();
  } catch (err) {
    if (err instanceof ServiceNotFoundError) exists = false;
    else {
      // A 500 for an unknown id: the list decides, at once unless never read (not listed yet?).
      const listed = await goneByList(run, id, err, options, "its detail read fails", !!refused);
      if (listed === undefined) throw wrapError(ERR.observe, err);
      if (listed !== "Gone") return waiting(run, listed, soonPollMs(options));
      exists = false;
    }
  }
  if (exists) {
    const message = refused
      ? `the delete of the remote resource ${id} failed (${errorMessage(refused)}) and the service still shows it: sending it again until it is gone`
      : `deleting the remote resource ${id}: waiting until the service no longer shows it`;
    const age = run.ageOf(run.obj.metadata?.deletionTimestamp ?? "");
    return waiting(run, message, refused ? agingPollMs(age, options) : soonPollMs(options));
  }
  return release(run, deleted(id));
}

/** Why no Delete for `id`: an earlier claimant, or an unverified binding the owner mark refuses. */
async function deleteRefusal<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  id: string,
  options: ManagedOptions,
): Promise<BindingRefusal | undefined> {
  const conflict = bindingConflict(run.ctx.cache, run.kind, run.obj, id);
  if (conflict) return conflict;
  if (run.kind.statusId?.(run.obj) === id || !run.client.ownerOf) return undefined;
  const o = await run.client.observe(run.call, id).catch(async (err: unknown) => {
    // Gone by the list (a 500 for an unknown id): nothing to spare, the delete finds it gone.
    if ((await goneByList(run, id, err, options, "", false)) !== "Gone") {
      throw wrapError(ERR.observe, err);
    }
    return { exists: false as const };
  });
  return o.exists
    ? ownershipRefusal(run.client, run.kind, run.obj, id, o.remote, options)
    : undefined;
}

/** Under a Delete policy, learns the id of a create in flight so it is not leaked. */
async function resolveInFlightCreate<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  options: ManagedOptions,
): Promise<ReconcileResult> {
  const { client, state } = run;
  const { pending } = state;
  let id: string | undefined;
  let failed = false;
  let why = `a create was sent${inFlightMarks(state)} but what it made cannot be identified`;
  const inFlightMs = pending ? createInFlightMs(pending, options) : 0;
  if (state.subscriptionKey && client.pollSubscription) {
    const key = state.subscriptionKey;
    let res: Awaited<ReturnType<NonNullable<typeof client.pollSubscription>>>;
    try {
      res = await client.pollSubscription(run.call, key);
      resultAnswered(run.absenceKey, key);
    } catch (err) {
      // A result the service no longer keeps: the client token finds the resource below.
      if (!resultForgotten(run.absenceKey, key, err)) throw wrapError(ERR.poll, err);
      res = { state: "Succeeded" };
    }
    const age = pending ? run.ageOf(pending.at) : Number.NaN;
    if (res.state === "Pending" && !resultLeftEmpty(res, age, visibilityWindowMs(options))) {
      const message = `waiting for subscription ${key} to finish before deleting its resource`;
      return waiting(run, message, agingPollMs(age, options));
    }
    // A failed order may leave what it made: the token finds it below, to delete it too.
    if (res.state === "Succeeded") id = res.externalId;
    else if (res.state === "Failed") failed = true;
  }
  if (!id && pending?.token) {
    const found = await runStep(ERR.lookup, async () => client.lookupByToken?.(run.call, pending));
    const d = decideAfterLookup({
      token: pending.token,
      key: lookupKeyOf(client.lookupKey?.(run.obj), pending.token),
      found,
      pendingAgeMs: run.ageOf(pending.at),
      inFlightMs,
      visibilityGraceMs: visibilityWindowMs(options),
    });
    if (d.decision === "Wait" && !failed) {
      const message = "waiting for an unfinished create to show before deleting";
      return waiting(run, message, d.requeueAfterMs);
    }
    if (d.decision === "Adopt") id = d.externalId;
    else if (d.decision === "Unknown") why = d.message;
  }
  if (!id && failed) return release(run);
  if (!id) {
    // Released once the list proves the create made (and can make) nothing; else the user decides.
    const proof = Number.isFinite(inFlightMs) ? pending : undefined;
    const absent = await runStep(ERR.lookup, () => absentListings(run, proof));
    if (absent.proven) return release(run);
    if (absent.listings > 0) return waiting(run, "listing again: nothing has its token", 1000);
    return unknownOnDelete(run.ctx, run.kind, run.obj, why, (r, m) => run.warning(r, m));
  }
  await run.annotate({ [ANNOTATIONS.externalId]: id });
  return deleteStep(run, options);
}
