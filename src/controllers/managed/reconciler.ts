/**
 * The managed loop's dispatcher (crossplane-runtime's managed reconciler, smaller): one
 * reconcile of one object, read top to bottom. It reads the object and its loop
 * annotations once (`ManagedRun.state`), decides the next step, and runs the steps,
 * which answer an outcome or the next step and never call each other:
 *
 *   deleting ─────────────► deletion.ts (policy, beforeDelete, delete, wait, release)
 *   live: finalizer → references (run.ts) → one binder per id
 *         (tenancy.ts) → adopt the spec's id → by the create protocol's state
 *         (create-protocol.ts, nextCreateStep):
 *           Create ──► order.ts ──► Observe | Poll | Done
 *           Poll ────► subscription.ts ──► Observe | Unknown | Done
 *           LookupByToken ► lookup.ts ──► Observe | Create | Unknown | Done
 *           Observe ─► observe.ts (observe, update) ──► Refused | Done
 *           CreateFailed (this generation) ──► Done
 *         → status (status-write.ts) → connection details, when the spec asks
 *         (export.ts) → requeue
 *
 * Before any of it, the user's steering (policies.ts): a paused object gets one
 * condition and nothing else; `spec.managementPolicies` decides whether the Create step
 * may run (here), whether drift is corrected and spec fields filled (observe.ts), and
 * whether a deletion deletes (deletion.ts).
 *
 * A failing step throws (`<step>: <cause>`, outcome.ts); the runtime backs off or
 * holds, records a Warning event and calls `onError`, which writes Synced=False and, for
 * a failure outside the object (an external hold), Ready too. docs/architecture.md
 * walks through it; policies that apply to every step (what the loop may do to an
 * object) belong here, before the dispatch.
 */
import { getCondition } from "../../runtime/conditions.js";
import type {
  ErrorPolicy,
  ReconcileResult,
  Reconciler,
  SettledCheck,
} from "../../runtime/controller.js";
import { ConflictError, ensureFinalizer, hasFinalizer } from "../../runtime/writes.js";
import { UNSCOPED_CALLS } from "../../service/call-context.js";
import type { ManagedObject } from "./call.js";
import { fromKube } from "./call.js";
import { writeConditions } from "./condition-writes.js";
import { ANNOTATIONS, nextCreateStep } from "./create-protocol.js";
import { heldReadyCondition, managedSettled, syncedConditionOf } from "./decisions.js";
import { deleteStep } from "./deletion.js";
import { createFailed, refused, unknownOutcome, withoutCreate } from "./endings.js";
import { exportConnectionDetails } from "./export.js";
import { EXPORT_RECHECK_POLLS, ExportMemory } from "./export-memory.js";
import type { ManagedKind, ManagedOptions } from "./external-client.js";
import { lookup } from "./lookup.js";
import { observe } from "./observe.js";
import { create } from "./order.js";
import type { Next, Outcome } from "./outcome.js";
import { deletionPolicyVerdict, isPaused, PAUSED_SYNCED } from "./policies.js";
import { type Connect, ManagedRun } from "./run.js";
import { writeStatus } from "./status-write.js";
import { poll } from "./subscription.js";
import { bindingConflict } from "./tenancy.js";

export { managedSettled };

/** The reconcile function and error policy of one managed kind. */
export interface ManagedReconciler {
  reconcile: Reconciler;
  /** Writes Synced=False (reason and message of the error) on the object. */
  onError: ErrorPolicy;
  /** For the controller builder's `.settled` (see {@link managedSettled}). */
  settled: SettledCheck;
}

/**
 * The next step of a live object from its state alone: adopt the spec's id, or what
 * the create protocol's annotations say (create-protocol.ts).
 */
function firstStep<T extends ManagedObject, R>(run: ManagedRun<T, R>): Next<R> | "Adopt" {
  if (run.adoptId && !run.state.externalId) return "Adopt";
  const next = nextCreateStep(run.state, run.generation);
  switch (next.step) {
    case "Observe":
      return { step: "Observe", externalId: next.externalId };
    case "PollSubscription":
      return { step: "Poll", key: next.key, pending: run.state.pending };
    case "LookupByToken":
      return { step: "Lookup", pending: next.pending };
    case "WaitForSpecChange":
      return { step: "CreateFailed" };
    case "Create":
      return { step: "Create" };
  }
}

/** Drives a live object from its first step to an outcome; see the module comment. */
async function live<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  options: ManagedOptions,
): Promise<Outcome<R>> {
  const bound = run.state.externalId !== undefined || run.adoptId !== undefined;
  run.resolveReferences(bound);
  // One binder per remote resource: an id another object holds is refused before any call.
  for (const id of new Set([run.state.externalId, run.adoptId])) {
    const conflict = id ? bindingConflict(run.ctx.cache, run.kind, run.obj, id) : undefined;
    if (conflict) return refused(run, conflict, options);
  }
  let next = firstStep(run);
  if (next === "Adopt") {
    const id = run.adoptId as string;
    await run.annotate({
      [ANNOTATIONS.externalId]: id,
      [ANNOTATIONS.createPending]: null,
      [ANNOTATIONS.subscriptionKey]: null,
      [ANNOTATIONS.createFailedGeneration]: null,
    });
    run.normal("Adopted", `bound to the existing remote resource ${id}`);
    next = { step: "Observe", externalId: id };
  } else if (next.step === "Observe" && run.state.pending) {
    // An id set by hand (to resolve CreateOutcomeUnknown) settles the pending create.
    await run.annotate({ [ANNOTATIONS.createPending]: null });
  }
  for (;;) {
    switch (next.step) {
      case "Done":
        return next.outcome;
      case "CreateFailed":
        return createFailed(run);
      case "Refused":
        return refused(run, next.refusal, options);
      case "Unknown":
        return unknownOutcome(run, next.why);
      case "Create":
        if (!run.policies.create) return withoutCreate(run);
        next = await create(run, options);
        break;
      case "Poll":
        next = await poll(run, next.key, next.pending, options, next.justOrdered);
        break;
      case "Lookup":
        next = await lookup(run, next.pending, options);
        break;
      case "Observe":
        next = await observe(run, next.externalId, options, next.subscription, next.binding);
        break;
    }
  }
}

/**
 * A paused object (policies.ts): Synced=False ReconcilePaused, written once, and no
 * requeue; removing the annotation is a change that enqueues the object at once.
 */
async function paused<T extends ManagedObject, R>(run: ManagedRun<T, R>): Promise<ReconcileResult> {
  const synced = getCondition(run.obj.status?.conditions, "Synced");
  const written =
    synced?.reason === PAUSED_SYNCED.reason &&
    synced.status === PAUSED_SYNCED.status &&
    synced.observedGeneration === run.generation;
  if (!written) await writeConditions(run.ctx, run.kind, run.obj, [PAUSED_SYNCED]);
  return {};
}

/**
 * Builds the loop of `kind`; `connect` hands the client of an object's account for the
 * calls of one reconcile.
 */
export function managedReconciler<T extends ManagedObject, R, Refs>(
  kind: ManagedKind<T, R, Refs>,
  options: ManagedOptions,
  connect: Connect<T, R, Refs>,
): ManagedReconciler {
  const exports = new ExportMemory(options.pollIntervalMs * EXPORT_RECHECK_POLLS);
  const reconcile: Reconciler = async (key, ctx) => {
    const found = ctx.cache.get(kind.resource, key);
    if (!found) return {};
    const run = new ManagedRun(kind, fromKube<T>(found), ctx, connect);
    if (isPaused(run.obj)) return paused(run);
    if (run.obj.metadata?.deletionTimestamp) {
      exports.forget(run.obj.metadata.uid ?? "");
      if (!hasFinalizer(found, kind.finalizer)) return {};
      return deleteStep(run, options);
    }
    // A fresh create writes the finalizer together with `create-pending` (one write
    // less); any other step needs it in place first.
    const next = firstStep(run);
    if (!hasFinalizer(found, kind.finalizer) && !(next !== "Adopt" && next.step === "Create")) {
      const withFinalizer = await ensureFinalizer(ctx.kube, kind.resource, found, kind.finalizer);
      if (!withFinalizer) return {};
      run.obj = fromKube<T>(withFinalizer);
    }
    const outcome = await live(run, options);
    const status = await writeStatus(run, outcome);
    // The export step, for an object whose spec names a ConfigMap and for every object of a
    // kind with secret details (a Secret written before may have to be deleted).
    if (run.obj.spec.exportTo?.configMapName || kind.exportSecretValues) {
      await exportConnectionDetails(run, status, exports);
    }
    if (outcome.requeueAfterMs === undefined) return {};
    return {
      requeueAfterMs: outcome.requeueAfterMs,
      ...(outcome.routine ? { lowPriority: true } : {}),
    };
  };
  // The DeletionPolicy condition beside an error; none when the object's connection is
  // what fails (nothing can be said about its delete operation then).
  const policyOf = (obj: T) => {
    try {
      return deletionPolicyVerdict(() => connect(obj, UNSCOPED_CALLS), obj).condition;
    } catch {
      return undefined;
    }
  };
  const onError: ErrorPolicy = async (key, err, ctx) => {
    // A conflict only means the cache was behind a write; the retry follows at once,
    // so it is not worth a Synced=False flap.
    if (err instanceof ConflictError) return;
    const found = ctx.cache.get(kind.resource, key);
    if (!found) return;
    const obj = fromKube<T>(found);
    const deleting = Boolean(obj.metadata?.deletionTimestamp);
    const ready = deleting
      ? undefined
      : heldReadyCondition(err, getCondition(obj.status?.conditions, "Ready"));
    const policy = deleting ? undefined : policyOf(obj);
    await writeConditions(ctx, kind, obj, [
      syncedConditionOf(err),
      ...(ready ? [ready] : []),
      ...(policy ? [policy] : []),
    ]);
  };
  return { reconcile, onError, settled: managedSettled };
}
