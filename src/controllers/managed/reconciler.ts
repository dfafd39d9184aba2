/**
 * The managed loop's dispatcher (crossplane-runtime's managed reconciler, smaller): one
 * reconcile of one object, read top to bottom. It reads the object and its annotations
 * once (`ManagedRun.state`), decides the next step ({@link nextCreateStep}) and runs the
 * steps, which answer an outcome or the next step and never call each other: deletion.ts;
 * or finalizer, references (run.ts), one binder per id (tenancy.ts), adoption (lookup.ts),
 * then Create and Poll (order.ts), Lookup (lookup.ts), Observe (observe.ts); then exports
 * renamed (export.ts), the status (writeStatus), connection details (export.ts), requeue.
 * Before it, the steering (decisions.ts): pause, and `spec.managementPolicies` gating
 * Create (here), Update, LateInitialize (observe.ts) and Delete (deletion.ts). A failing
 * step throws `<step>: <cause>` (run.ts); the runtime backs off and calls the error policy
 * (condition-writes.ts). docs/architecture.md draws the states.
 */
import { REASONS } from "../../crds/index.js";
import type { ErrorPolicy, Reconciler, SettledCheck } from "../../runtime/controller.js";
import { ensureFinalizer, hasFinalizer, patchStatus } from "../../runtime/index.js";
import {
  type ConditionInput,
  getCondition,
  removeCondition,
  setCondition,
  withKstatusConditions,
} from "../../runtime/object-writes.js";
import { UNSCOPED_CALLS } from "../../service/call-context.js";
import type { ManagedObject } from "./call.js";
import {
  managedErrorPolicy,
  paused,
  referencesCondition,
  writeConditions,
} from "./condition-writes.js";
import {
  type CreatePending,
  type CreateState,
  DELETION_POLICY_CONDITION,
  deletionPolicyVerdict,
  isPaused,
  managedSettled,
} from "./decisions.js";
import { deleteStep } from "./deletion.js";
import { createFailed, refused, unknownOutcome, withoutCreate } from "./endings.js";
import { type ExportedNames, exportConnectionDetails, releaseRenamedExports } from "./export.js";
import { EXPORT_RECHECK_POLLS, ExportMemory } from "./export-memory.js";
import type { ManagedKind, ManagedOptions } from "./external-client.js";
import type { Absences } from "./gone-evidence.js";
import { adopt, lookup } from "./lookup.js";
import { observe } from "./observe.js";
import { create, poll } from "./order.js";
import { type Connect, ManagedRun, type Next, type Outcome } from "./run.js";
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

/** The next step of the create protocol for its state. */
export type CreateStep =
  | { step: "Observe"; externalId: string }
  | { step: "PollSubscription"; key: string }
  | { step: "LookupByToken"; pending: CreatePending }
  | { step: "WaitForSpecChange"; failedGeneration: number }
  | { step: "Create" };

/** A known id wins over a key, a key over a marker; only a state with none may create. */
export function nextCreateStep(state: CreateState, generation: number): CreateStep {
  if (state.externalId) return { step: "Observe", externalId: state.externalId };
  if (state.subscriptionKey) return { step: "PollSubscription", key: state.subscriptionKey };
  if (state.pending) return { step: "LookupByToken", pending: state.pending };
  if (state.failedGeneration !== undefined && state.failedGeneration >= generation) {
    return { step: "WaitForSpecChange", failedGeneration: state.failedGeneration };
  }
  return { step: "Create" };
}

/** The next step of a live object: adopt the spec's id, or {@link nextCreateStep}. */
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
  if (next === "Adopt") next = await adopt(run);
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
 * Builds the loop of `kind`; `connect` hands the client of an object's account for the
 * calls of one reconcile.
 */
export function managedReconciler<T extends ManagedObject, R, Refs>(
  kind: ManagedKind<T, R, Refs>,
  options: ManagedOptions,
  connect: Connect<T, R, Refs>,
): ManagedReconciler {
  const exports = new ExportMemory(options.pollIntervalMs * EXPORT_RECHECK_POLLS);
  const absences: Absences = new Map();
  const reconcile: Reconciler = async (key, ctx) => {
    const found = ctx.cache.get<T>(kind.resource, key);
    if (!found) return {};
    const run = new ManagedRun(kind, found, ctx, connect, absences);
    if (isPaused(run.obj)) return paused(ctx, kind, run.obj);
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
      run.obj = withFinalizer as T;
    }
    const outcome = await live(run, options);
    // What was written under a renamed or removed spec.exportTo name goes before the
    // status write records the new names (a crash between them leaves the old recorded).
    const names = exportedNames(kind, run.obj);
    if (renamedExport(run.obj, names)) {
      const obj = run.obj;
      const secrets = kind.exportSecretValues !== undefined;
      await releaseRenamedExports(ctx.kube, kind.resource, obj, names, exports, secrets);
    }
    const { status, held } = await writeStatus(run, outcome, names);
    // The export step, for an object whose spec names a ConfigMap or a Secret.
    if (run.obj.spec.exportTo?.configMapName || run.obj.spec.exportTo?.secretName) {
      await exportConnectionDetails(run, status, exports);
      if (held) await writeConditions(ctx, kind, held, [{ type: "Synced", ...outcome.synced }]);
    }
    if (outcome.requeueAfterMs === undefined) return {};
    return {
      requeueAfterMs: outcome.requeueAfterMs,
      ...(outcome.priority ? { priority: outcome.priority } : {}),
    };
  };
  const onError = managedErrorPolicy(kind, (obj) => connect(obj, UNSCOPED_CALLS));
  return { reconcile, onError, settled: managedSettled };
}

/**
 * The names of `obj`'s spec.exportTo that its status records (`exportedConfigMapName`,
 * and `exportedSecretName` for a kind that writes Secrets): what export.ts writes to.
 */
function exportedNames<T extends ManagedObject, R>(kind: ManagedKind<T, R>, obj: T): ExportedNames {
  const to = obj.spec.exportTo;
  return {
    ...(kind.exportValues && to?.configMapName ? { exportedConfigMapName: to.configMapName } : {}),
    ...(kind.exportSecretValues && to?.secretName ? { exportedSecretName: to.secretName } : {}),
  };
}

/** Whether `obj`'s status records an export name that `names` no longer has. */
function renamedExport(obj: ManagedObject, names: ExportedNames): boolean {
  const recorded: ExportedNames = obj.status ?? {};
  return (["exportedConfigMapName", "exportedSecretName"] as const).some(
    (f) => recorded[f] !== undefined && recorded[f] !== names[f],
  );
}

/**
 * The kind's status fields of `outcome`: from the remote record observed, or, when none
 * was and the kind names its fact fields, the previous status's other fields kept and
 * the fact fields written anew.
 */
function kindStatus<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  outcome: Outcome<R>,
): Record<string, unknown> {
  const { kind, obj } = run;
  if (outcome.remote !== undefined || !kind.factFields) {
    return kind.status(obj, outcome.facts, outcome.remote);
  }
  const kept: Record<string, unknown> = { ...(obj.status ?? {}) };
  for (const field of ["conditions", "observedGeneration", ...kind.factFields]) {
    delete kept[field];
  }
  return { ...kept, ...kind.status(obj, outcome.facts, undefined) };
}

/**
 * The status write that ends a live reconcile: the conditions (Ready and Synced from
 * `outcome`, the kind's, ReferencesResolved, DeletionPolicy, kstatus) over the kind's
 * status fields and the export `names`, patched only when something changed; answers
 * the status fields written, and the object written when it held Synced=False for the
 * export to decide.
 */
async function writeStatus<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  outcome: Outcome<R>,
  names: ExportedNames,
): Promise<{ status: Record<string, unknown>; held: T | undefined }> {
  const { obj, ctx, kind } = run;
  const generation = obj.metadata?.generation;
  const now = ctx.clock.now();
  let conditions = setCondition(
    obj.status?.conditions,
    { type: "Ready", ...outcome.ready },
    generation,
    now,
  );
  // A Synced=False stays until the export that follows succeeds: else an export refused
  // at every retry would turn it True and back each time.
  const exporting = Boolean(names.exportedConfigMapName || names.exportedSecretName);
  const hold =
    exporting &&
    outcome.synced.status === "True" &&
    getCondition(obj.status?.conditions, "Synced")?.status === "False";
  if (!hold) {
    conditions = setCondition(conditions, { type: "Synced", ...outcome.synced }, generation, now);
  }
  const extra: (ConditionInput | { type: string; remove: true })[] =
    kind.conditions?.(run.call, outcome.ready, outcome.remote) ?? [];
  if (run.resolution) extra.push(referencesCondition(run.resolution));
  const policy = deletionPolicyVerdict(() => run.client, obj);
  if (policy.condition) extra.push(policy.condition);
  else conditions = removeCondition(conditions, DELETION_POLICY_CONDITION);
  for (const c of extra) {
    conditions =
      "remove" in c
        ? removeCondition(conditions, c.type)
        : setCondition(conditions, c, generation, now);
  }
  conditions = withKstatusConditions(conditions, REASONS, generation, now);
  const base = outcome.keepStatus ? { ...(obj.status ?? {}) } : kindStatus(run, outcome);
  const { object, notKept } = await patchStatus(ctx.kube, kind.resource, obj, {
    ...base,
    ...lastHandled(run),
    exportedConfigMapName: names.exportedConfigMapName,
    exportedSecretName: names.exportedSecretName,
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    conditions,
  });
  if (notKept) run.warning("WriteNotKept", notKept);
  if (policy.condition && policy.warn) {
    run.warning("DeletePolicyNotHonoured", policy.condition.message);
  }
  return { status: base, held: hold ? object : undefined };
}

/** status.lastHandledReconcileAt: the request this reconcile handled, else the previous one. */
function lastHandled<T extends ManagedObject, R>(run: ManagedRun<T, R>) {
  const at = run.reconcileRequest ?? run.obj.status?.lastHandledReconcileAt;
  return at === undefined ? {} : { lastHandledReconcileAt: at };
}
