/**
 * The tenancy checks of the managed loop (rules in tenancy.ts): before a claimed id is
 * used, the one-binder index; after the remote record is read and before anything is
 * changed, the owner mark; before a Delete, both.
 */
import type { CacheReader } from "../../runtime/cache.js";
import { getCondition } from "../../runtime/conditions.js";
import type { KubeObject } from "../../runtime/resource.js";
import type { IndexFunc } from "../../runtime/store.js";
import type { ManagedObject } from "./call.js";
import { toKube } from "./call.js";
import { ANNOTATIONS } from "./create-protocol.js";
import type { KindClient, ManagedKind, ManagedOptions } from "./external-client.js";
import {
  type BindingRefusal,
  BOUND_ID_INDEX,
  decideFirstBinder,
  decideOwnership,
  isBindingRefusal,
  mayAdopt,
} from "./tenancy.js";

/** The ids an object claims: the external-id annotation and the kind's spec id. */
export function claimedIds(obj: KubeObject, specId: string | undefined): string[] {
  const ready = getCondition(
    (obj as { status?: { conditions?: Parameters<typeof getCondition>[0] } }).status?.conditions,
    "Ready",
  );
  // A claimant refused for its binding holds nothing: it cannot block the rightful one.
  if (isBindingRefusal(ready?.reason)) return [];
  const ids = [obj.metadata?.annotations?.[ANNOTATIONS.externalId]?.trim(), specId?.trim()];
  return [...new Set(ids.filter((id): id is string => Boolean(id)))];
}

/** The index function of {@link BOUND_ID_INDEX} for a managed kind. */
export function boundIdIndex<T extends ManagedObject, R>(kind: ManagedKind<T, R>): IndexFunc {
  return (o: KubeObject) => claimedIds(o, kind.adoptId?.(o as unknown as T));
}

/** What the id is, for messages: "the remote resource of this NasVolume". */
function what<T extends ManagedObject, R>(kind: ManagedKind<T, R>): string {
  return `the remote resource of this ${kind.resource.kind}`;
}

/** The refusal when an earlier object of the cluster claims `id` (no service call). */
export function bindingConflict<T extends ManagedObject, R>(
  cache: CacheReader,
  kind: ManagedKind<T, R>,
  obj: T,
  id: string,
): BindingRefusal | undefined {
  const claimants = cache.byIndex(kind.resource, BOUND_ID_INDEX, id);
  const statusId = kind.statusId?.bind(kind);
  return decideFirstBinder(
    toKube(obj),
    id,
    claimants,
    what(kind),
    kind.resource.kind,
    (o) => statusId?.(o as unknown as T) === id,
  );
}

/** The refusal when the remote record's owner mark does not let `obj` act on it. */
export function ownershipRefusal<T extends ManagedObject, R>(
  client: KindClient<T, R>,
  kind: ManagedKind<T, R>,
  obj: T,
  id: string,
  remote: R,
  options: ManagedOptions,
): BindingRefusal | undefined {
  const ownerOf = client.ownerOf?.bind(client);
  if (!ownerOf) return undefined;
  const namespace = obj.metadata?.namespace ?? "";
  return decideOwnership({
    namespace,
    mark: ownerOf(remote),
    alreadyBound: kind.statusId?.(obj) === id,
    adoptionAllowed: mayAdopt(options.adoptionNamespaces ?? [], namespace),
    what: `${what(kind)} (${id})`,
  });
}
