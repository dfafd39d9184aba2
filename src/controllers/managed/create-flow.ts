/**
 * The live (not deleting) half of the generic managed reconciler: adoption, the
 * crash-safe create protocol (create-protocol.ts) and observe → update. Each step
 * returns an {@link Outcome}; the reconciler turns it into conditions and status. The
 * steps of the protocol have their own modules: placing the order (create-order.ts),
 * polling its subscription (subscription-poll.ts), recovering an unfinished create by
 * its client token (create-lookup.ts) and giving up on an unknowable outcome
 * (outcome-unknown.ts).
 */
import { bindingConflict, refused } from "./binding.js";
import type { ManagedObject } from "./call.js";
import { lookup } from "./create-lookup.js";
import { create } from "./create-order.js";
import { ANNOTATIONS, nextCreateStep, readCreateState } from "./create-protocol.js";
import type { ManagedKind, ManagedOptions } from "./external-client.js";
import { observe } from "./observe.js";
import { type Outcome, SYNCED_OK } from "./outcome.js";
import { resolveStep } from "./resolve-references.js";
import { factsOf, type ManagedRun } from "./run.js";
import { poll } from "./subscription-poll.js";

/**
 * True when the next step of a live object is a fresh create (no adoption, no create
 * in flight, no remote id): its first write is `create-pending`, which then also adds
 * the finalizer.
 */
export function startsWithCreate<T extends ManagedObject, R>(
  kind: ManagedKind<T, R>,
  obj: T,
): boolean {
  if (kind.adoptId?.(obj)) return false;
  const state = readCreateState(obj.metadata?.annotations);
  return nextCreateStep(state, obj.metadata?.generation ?? 0).step === "Create";
}

/** Drives a live object one step: adopt, create, poll, look up, or observe and update. */
export async function createOrObserve<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  options: ManagedOptions,
): Promise<Outcome<R>> {
  run.resolution = resolveStep(run.kind, run.obj, run.ctx.cache);
  const state = readCreateState(run.obj.metadata?.annotations);
  const adoptId = run.kind.adoptId?.(run.obj);
  // One binder per remote resource: an id another object holds is refused before any call.
  for (const id of new Set([state.externalId, adoptId])) {
    const conflict = id ? bindingConflict(run, id) : undefined;
    if (conflict) return refused(run, conflict, options);
  }
  if (adoptId && !state.externalId) {
    await run.annotate({
      [ANNOTATIONS.externalId]: adoptId,
      [ANNOTATIONS.createPending]: null,
      [ANNOTATIONS.subscriptionKey]: null,
      [ANNOTATIONS.createFailedGeneration]: null,
    });
    run.normal("Adopted", `bound to the existing remote resource ${adoptId}`);
    return observe(run, adoptId, options);
  }
  const next = nextCreateStep(state, run.generation);
  switch (next.step) {
    case "Observe":
      // An id set by hand (to resolve CreateOutcomeUnknown) settles the pending create.
      if (state.pending) await run.annotate({ [ANNOTATIONS.createPending]: null });
      return observe(run, next.externalId, options);
    case "PollSubscription":
      return poll(run, next.key, state.pending, options);
    case "LookupByToken":
      return lookup(run, next.pending, options);
    case "WaitForSpecChange": {
      const prev = run.obj.status?.conditions?.find((c) => c.type === "Ready");
      return {
        facts: factsOf(run),
        ready: {
          status: "False",
          reason: "CreateFailed",
          message: prev?.reason === "CreateFailed" ? prev.message : "the create failed",
        },
        synced: SYNCED_OK,
        keepStatus: true,
      };
    }
    case "Create":
      return create(run, options);
  }
}
