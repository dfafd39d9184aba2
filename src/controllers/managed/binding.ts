/**
 * The tenancy checks of the generic managed loop (rules in tenancy.ts): before a
 * claimed id is used, the one-binder index; after the remote record is read and before
 * anything is changed, the owner mark; before a Delete, both.
 */
import type { KubeObject } from "../../runtime/resource.js";
import type { IndexFunc } from "../../runtime/store.js";
import type { ManagedObject } from "./call.js";
import type { ManagedKind, ManagedOptions } from "./external-client.js";
import { toKube } from "./kube-casts.js";
import type { Outcome } from "./outcome.js";
import { factsOf, type ManagedRun } from "./run.js";
import {
  type BindingRefusal,
  BOUND_ID_INDEX,
  claimedIds,
  decideFirstBinder,
  decideOwnership,
  mayAdopt,
} from "./tenancy.js";

/** The index function of {@link BOUND_ID_INDEX} for a managed kind. */
export function boundIdIndex<T extends ManagedObject, R>(kind: ManagedKind<T, R>): IndexFunc {
  return (o: KubeObject) => claimedIds(o, kind.adoptId?.(o as unknown as T));
}

/** What the id is, for messages: "the remote NasVolume resource". */
function what<T extends ManagedObject, R>(run: ManagedRun<T, R>): string {
  return `the remote resource of this ${run.kind.resource.kind}`;
}

/** The refusal when an earlier object of the cluster claims `id` (no service call). */
export function bindingConflict<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  id: string,
): BindingRefusal | undefined {
  const claimants = run.ctx.cache.byIndex(run.kind.resource, BOUND_ID_INDEX, id);
  const statusId = run.kind.statusId?.bind(run.kind);
  return decideFirstBinder(
    toKube(run.obj),
    id,
    claimants,
    what(run),
    run.kind.resource.kind,
    (o) => statusId?.(o as unknown as T) === id,
  );
}

/** The refusal when the remote record's owner mark does not let this object act on it. */
export function ownershipRefusal<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  id: string,
  remote: R,
  options: ManagedOptions,
): BindingRefusal | undefined {
  const ownerOf = run.client.ownerOf?.bind(run.client);
  if (!ownerOf) return undefined;
  const namespace = run.obj.metadata?.namespace ?? "";
  return decideOwnership({
    namespace,
    mark: ownerOf(remote),
    alreadyBound: run.kind.statusId?.(run.obj) === id,
    adoptionAllowed: mayAdopt(options.adoptionNamespaces ?? [], namespace),
    what: `${what(run)} (${id})`,
  });
}

/**
 * The outcome of a refused binding: Ready and Synced False with the terminal reason,
 * the previous status kept (so no remote id is recorded), and a look again after the
 * poll interval (an earlier binder may go away). The Warning event is sent when the
 * refusal is new.
 */
export function refused<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  refusal: BindingRefusal,
  options: ManagedOptions,
): Outcome<R> {
  const prev = run.obj.status?.conditions?.find((c) => c.type === "Ready");
  if (prev?.reason !== refusal.reason || prev.message !== refusal.message) {
    run.warning(refusal.reason, refusal.message);
  }
  const cond = { status: "False" as const, ...refusal };
  return {
    facts: factsOf(run),
    ready: cond,
    synced: cond,
    keepStatus: true,
    requeueAfterMs: options.pollIntervalMs,
    routine: true,
  };
}
