/**
 * The generic managed-resource reconciler (crossplane-runtime style): one loop for
 * every kind whose remote resource sits behind an {@link ExternalClient}.
 *
 * Contract, in order (DESIGN §5):
 * 1. Read the object from the cache; gone → done.
 * 2. Deleting → per `spec.deletionPolicy` (see {@link decideDeletion}): Orphan (default)
 *    leaves the remote resource (Normal event `Orphaned`); Delete runs the kind's
 *    `client.beforeDelete` until it is done, then calls `client.delete`, and where the
 *    kind or the operator has no delete operation orphans it with a Warning event
 *    `DeletePolicyNotHonoured`; a create in flight is resolved first. A delete that
 *    answers "InProgress" is observed until the resource is gone (deletion.ts); every
 *    wait is Ready=False `Deleting`. Then the finalizer is removed. A failing step keeps
 *    the finalizer, and the error policy writes Synced=False saying why.
 * 3. The finalizer is in place before anything remote is ordered: before any other
 *    step, and in the same write as `create-pending` when the step is a create (the
 *    preflight before it only reads).
 * 4. The kind's reference step (`kind.resolveReferences`, resolve-references.ts): the
 *    objects it refers to, read from the cache in its namespace, become `call.refs`
 *    and ReferencesResolved; unresolved, nothing is created (Ready and Synced False
 *    with the reason) and a bound resource is observed but not updated.
 *    Then `spec`-adoption (`client.adoptId`), else, once `client.requireOperations` found
 *    every operation the order needs answered (else an external hold naming the
 *    missing one: nothing is ordered that could not finish), the crash-safe create protocol
 *    (create-protocol.ts): preflight (a refusal is Ready=False and Synced=False with its
 *    reason, and nothing is ordered) → `aidc.io/create-pending` {token, at, generation}
 *    → `client.create(token)` → one poll: resolved → `aidc.io/external-id` (with the
 *    key, one write); pending → `aidc.io/subscription-key` → poll with backoff →
 *    `aidc.io/external-id`. Pending without key → `client.lookupByToken` for the list
 *    visibility window, never a second create; undecidable, or not found after it →
 *    Ready=False and Synced=False `CreateOutcomeUnknown` plus a Warning event telling the
 *    user to set `aidc.io/external-id` or remove `aidc.io/create-pending`. A failed
 *    subscription → Ready=False `CreateFailed` with the service's message and a Warning
 *    event; it is retried only for a newer generation.
 * 5. Known id → `client.observe`; not up to date → `client.update` (Normal `Updated`;
 *    a refusal → Synced=False with its reason and a Warning event). A failed detail read
 *    is checked against the kind's list (gone-evidence.ts) before it is reported.
 * 6. Status = `kind.status(...)` + Ready + Synced (each with observedGeneration) +
 *    observedGeneration, patched only when it changed; requeue after the poll interval
 *    (sooner while a subscription or an update is in progress).
 *
 * Failures are thrown (wrapped: `<step message>: <cause>`, terminal when the cause is);
 * the runtime backs off or holds, records a Warning event, and calls
 * {@link ManagedReconciler.onError}, which writes Synced=False with the reason and message,
 * and for a failure outside the object (an external hold: API key refused, missing
 * operation, unknown answer shape) also Ready (True becomes Unknown, otherwise False),
 * so that a stale Ready=True does not outlive a service that refuses the operator.
 * Such holds are retried on the runtime's slow hold backoff and at a key change.
 */

import {
  type ConditionInput,
  getCondition,
  removeCondition,
  setCondition,
} from "../../runtime/conditions.js";
import type { ErrorPolicy, Reconciler, SettledCheck } from "../../runtime/controller.js";
import type { DeclaredRule } from "../../runtime/permissions.js";
import { ConflictError, ensureFinalizer, hasFinalizer, patchStatus } from "../../runtime/writes.js";
import { withKstatusConditions } from "../health-conditions.js";
import type { ManagedObject } from "./call.js";
import { writeConditions } from "./condition-writes.js";
import { createOrObserve, startsWithCreate } from "./create-flow.js";
import { heldReadyCondition, syncedConditionOf } from "./decisions.js";
import { deleteStep } from "./deletion.js";
import { DELETION_POLICY_CONDITION, deletionPolicyVerdict } from "./deletion-policy.js";
import type { KindClient, ManagedKind, ManagedOptions } from "./external-client.js";
import { fromKube, toKube } from "./kube-casts.js";
import type { Outcome } from "./outcome.js";
import { referencesCondition } from "./resolve-references.js";
import { ManagedRun } from "./run.js";
import { managedSettled } from "./settled.js";

export { managedSettled };

/** The reconcile function and error policy of one managed kind. */
export interface ManagedReconciler {
  reconcile: Reconciler;
  /** Writes Synced=False (reason and message of the error) on the object. */
  onError: ErrorPolicy;
  /** For the controller builder's `.settled` (see {@link managedSettled}). */
  settled: SettledCheck;
}

/** Builds the generic loop for `kind`; see the module comment for the contract. */
export function managedReconciler<T extends ManagedObject, R, Refs>(
  kind: ManagedKind<T, R, Refs>,
  options: ManagedOptions,
  connect: (obj: T) => KindClient<T, R, Refs>,
): ManagedReconciler {
  const reconcile: Reconciler = async (key, ctx) => {
    const found = ctx.cache.get(kind.resource, key);
    if (!found) return {};
    const cached = fromKube<T>(found);
    if (cached.metadata?.deletionTimestamp) {
      if (!hasFinalizer(found, kind.finalizer)) return {};
      return deleteStep(new ManagedRun(kind, cached, ctx, connect), options);
    }
    // A create writes the finalizer together with `create-pending` (one write less);
    // any other step needs it in place first.
    const withFinalizer =
      hasFinalizer(found, kind.finalizer) || startsWithCreate(kind, cached)
        ? found
        : await ensureFinalizer(ctx.kube, kind.resource, found, kind.finalizer);
    if (!withFinalizer) return {};
    const obj = fromKube<T>(withFinalizer);
    const run = new ManagedRun(kind, obj, ctx, connect);
    const outcome = await createOrObserve(run, options);
    await writeStatus(run, outcome);
    if (outcome.requeueAfterMs === undefined) return {};
    return {
      requeueAfterMs: outcome.requeueAfterMs,
      ...(outcome.routine ? { lowPriority: true } : {}),
    };
  };
  const onError: ErrorPolicy = async (key, err, ctx) => {
    // A conflict only means the cache was behind a write; the retry follows at once,
    // so it is not worth a Synced=False flap.
    if (err instanceof ConflictError) return;
    const found = ctx.cache.get(kind.resource, key);
    if (!found) return;
    const obj = fromKube<T>(found);
    const ready = obj.metadata?.deletionTimestamp
      ? undefined
      : heldReadyCondition(err, getCondition(obj.status?.conditions, "Ready"));
    const policy = obj.metadata?.deletionTimestamp ? undefined : policyOf(obj);
    await writeConditions(ctx, kind, obj, [
      syncedConditionOf(err),
      ...(ready ? [ready] : []),
      ...(policy ? [policy] : []),
    ]);
  };
  // The DeletionPolicy condition beside an error; none when the object's connection is
  // what fails (nothing can be said about its delete operation then).
  const policyOf = (obj: T) => {
    try {
      return deletionPolicyVerdict(() => connect(obj), obj).condition;
    } catch {
      return undefined;
    }
  };
  return { reconcile, onError, settled: managedSettled };
}

async function writeStatus<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  outcome: Outcome<R>,
): Promise<void> {
  const { obj, ctx, kind } = run;
  const generation = obj.metadata?.generation;
  const now = ctx.clock.now();
  let conditions = setCondition(
    obj.status?.conditions,
    { type: "Ready", ...outcome.ready },
    generation,
    now,
  );
  conditions = setCondition(conditions, { type: "Synced", ...outcome.synced }, generation, now);
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
  conditions = withKstatusConditions(conditions, generation, now);
  const base = outcome.keepStatus
    ? { ...(obj.status ?? {}) }
    : kind.status(obj, outcome.facts, outcome.remote);
  await patchStatus(ctx.kube, kind.resource, toKube(obj), {
    ...base,
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    conditions,
  });
  if (policy.condition && policy.warn) {
    run.warning("DeletePolicyNotHonoured", policy.condition.message);
  }
}

/**
 * The RBAC rules the generic loop needs on its kind, declared with `.permissions` (the
 * generated RBAC grants what the controllers declare), as kubebuilder's markers declare
 * them: the objects (read, watch, annotation and finalizer writes; never create or
 * delete, since the user owns the objects), the status subresource, and the finalizers
 * subresource (needed where OwnerReferencesPermissionEnforcement is on).
 */
export function managedPermissions(res: { group: string; plural: string }): DeclaredRule[] {
  return [
    {
      apiGroups: [res.group],
      resources: [res.plural],
      verbs: ["get", "list", "watch", "update", "patch"],
      reason: "watch the objects, write annotations and the finalizer",
    },
    {
      apiGroups: [res.group],
      resources: [`${res.plural}/status`],
      verbs: ["get", "update", "patch"],
      reason: "write the status subresource",
    },
    {
      apiGroups: [res.group],
      resources: [`${res.plural}/finalizers`],
      verbs: ["update"],
      reason: "set and remove the finalizer",
    },
  ];
}
