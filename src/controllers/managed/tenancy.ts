/**
 * Who may bind an object to which remote resource: every namespace shares one API key, so
 * the operator keeps tenants apart (docs/security.md, "Tenancy"): one object per remote id
 * (the first claimant wins), adoption only where `adoption.namespaces` allows, and owner
 * marks (hashes of namespace and object) that refuse another namespace's resources. The
 * loop checks {@link bindingConflict} before a claimed id is used and
 * {@link ownershipRefusal} after the record is read, before any change.
 */
import { createHash } from "node:crypto";
import type { CacheReader, IndexFunc } from "../../runtime/cache.js";
import { getCondition } from "../../runtime/object-writes.js";
import type { KubeObject, ResourceDescriptor } from "../../runtime/resource.js";
import type { ManagedObject, OwnerMark, UnreadMark } from "./call.js";
import { ANNOTATIONS } from "./decisions.js";

/** Index name: objects of a kind by every remote id they claim. */
export const BOUND_ID_INDEX = "byBoundId";

/** The setting that permits adoption, as refusals name it. */
export const ADOPTION_SETTING =
  "adoption.namespaces (operator config; chart value adoption.namespaces)";

/** Terminal reasons of a refused binding. */
export const BINDING_REFUSALS = {
  alreadyBound: "AlreadyBoundRefused",
  adoption: "AdoptionRefused",
  ownedElsewhere: "OwnedElsewhereRefused",
} as const;

/** A refused binding: a terminal condition, and nothing is called. */
export interface BindingRefusal {
  reason: (typeof BINDING_REFUSALS)[keyof typeof BINDING_REFUSALS];
  message: string;
}

const REFUSAL_REASONS: ReadonlySet<string> = new Set(Object.values(BINDING_REFUSALS));

export function isBindingRefusal(reason: string | undefined): boolean {
  return reason !== undefined && REFUSAL_REASONS.has(reason);
}

/** Whether `namespace` may adopt, under `adoption.namespaces` (`"*"`: every namespace). */
export function mayAdopt(allowed: readonly string[], namespace: string): boolean {
  return allowed.includes("*") || allowed.includes(namespace);
}

/** A refusal of an adoption, naming the setting that would allow it. */
export function adoptionRefusal(namespace: string, what: string): BindingRefusal {
  return {
    reason: BINDING_REFUSALS.adoption,
    message: `${what}: the operator did not create it for an object of namespace ${namespace}, and ${namespace} may not adopt remote resources; allow it with ${ADOPTION_SETTING}`,
  };
}

/** Raw `storageId` mounts must name ids a Ready NasVolume of the namespace holds (`own`). */
export function rawMountRefusal(
  namespace: string,
  ids: readonly string[],
  own: ReadonlySet<string | undefined>,
  adoption: readonly string[],
): BindingRefusal | undefined {
  if (mayAdopt(adoption, namespace)) return undefined;
  const foreign = ids.filter((id) => !own.has(id));
  if (foreign.length === 0) return undefined;
  return adoptionRefusal(namespace, `the raw storageId mount of ${foreign.join(", ")}`);
}

function hash16(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 16);
}

function namespaceMark(namespace: string): string {
  return hash16(`aidc.io/namespace:${namespace}`);
}

/** The mark of an object `namespace/name`: stable, and without the names in clear. */
export function ownerMark(namespace: string, name: string): OwnerMark {
  return { namespace: namespaceMark(namespace), object: hash16(`${namespace}/${name}`) };
}

/** The mark as text (`<namespace hash>.<object hash>`). */
export function formatOwnerMark(m: OwnerMark): string {
  return `${m.namespace}.${m.object}`;
}

/** Reads {@link formatOwnerMark}'s text; undefined when absent or malformed. */
export function parseOwnerMark(text: string | undefined): OwnerMark | undefined {
  const m = /^([0-9a-f]{16})\.([0-9a-f]{16})$/.exec(text?.trim() ?? "");
  return m ? { namespace: m[1] as string, object: m[2] as string } : undefined;
}

/** What the owner check knows about a bound remote resource. */
export interface OwnershipInput {
  namespace: string;
  /** The remote's mark; undefined: none (not created by the operator). */
  mark: OwnerMark | UnreadMark | undefined;
  /** The object's status records this id: the operator bound it earlier. */
  alreadyBound: boolean;
  /** The id came from this object's own create in this reconcile. */
  ownCreate?: boolean;
  adoptionAllowed: boolean;
  /** For messages ("NAS storage-1"). */
  what: string;
}

/**
 * Whether an object may act on the remote resource it is bound to: a mark of its own
 * namespace is its own (a restored object, a crash recovery); another namespace's is
 * refused; no mark is an adoption, kept when the status shows the operator bound it,
 * else allowed only where adoption is. A mark the record does not show counts as none,
 * except for the object's own create just answered.
 */
export function decideOwnership(input: OwnershipInput): BindingRefusal | undefined {
  const own = namespaceMark(input.namespace);
  if (input.mark && "unread" in input.mark) {
    if (input.alreadyBound || input.ownCreate || input.adoptionAllowed) return undefined;
    return {
      reason: BINDING_REFUSALS.adoption,
      message: `${input.what}: the service shows it without ${input.mark.unread}, where the operator's owner mark travels, so whether the operator created it for an object of namespace ${input.namespace} cannot be read, and ${input.namespace} may not adopt remote resources; allow it with ${ADOPTION_SETTING}`,
    };
  }
  if (input.mark) {
    if (input.mark.namespace === own) return undefined;
    return {
      reason: BINDING_REFUSALS.ownedElsewhere,
      message: `${input.what} was created by the operator for an object of another namespace; it is not touched from namespace ${input.namespace}`,
    };
  }
  if (input.alreadyBound || input.adoptionAllowed) return undefined;
  return adoptionRefusal(input.namespace, input.what);
}

/** Sort key of a claimant: a verified binding first, then creation time, then uid. */
function order(o: KubeObject, verified: (o: KubeObject) => boolean): [number, number, string] {
  const t = Date.parse(o.metadata?.creationTimestamp ?? "");
  return [
    verified(o) ? 0 : 1,
    Number.isFinite(t) ? t : Number.POSITIVE_INFINITY,
    o.metadata?.uid ?? "",
  ];
}

/**
 * Refuses `self`'s claim on `id` when another claimant precedes it: one whose status
 * records the id (`verified`: tenants cannot write status) first, then the older
 * (creationTimestamp, whole seconds), then the smaller uid. The other is named only in the same namespace: naming another tenant's
 * object would tell this tenant what it has.
 */
export function decideFirstBinder(
  self: KubeObject,
  id: string,
  claimants: readonly KubeObject[],
  what: string,
  kindName: string,
  verified: (o: KubeObject) => boolean = () => false,
): BindingRefusal | undefined {
  const uid = self.metadata?.uid;
  const precedes = (a: KubeObject, b: KubeObject): boolean => {
    const [va, ta, ua] = order(a, verified);
    const [vb, tb, ub] = order(b, verified);
    return va !== vb ? va < vb : ta !== tb ? ta < tb : ua < ub;
  };
  const first = claimants
    .filter((c) => c.metadata?.uid !== uid)
    .filter((c) => precedes(c, self))
    .sort((a, b) => (precedes(a, b) ? -1 : 1))[0];
  if (!first) return undefined;
  const ns = self.metadata?.namespace;
  const who =
    first.metadata?.namespace === ns
      ? `${kindName} ${first.metadata?.name} of this namespace`
      : "another object (in another namespace)";
  return {
    reason: BINDING_REFUSALS.alreadyBound,
    message: `${what} (${id}) is already bound by ${who}; a remote resource is bound to one object only`,
  };
}

/** What the checks read of a managed kind (its `ManagedKind`, external-client.ts). */
export interface BindingKind<T extends ManagedObject> {
  readonly resource: ResourceDescriptor;
  adoptId?(obj: T): string | undefined;
  /** The remote id the object's status records (a verified binding). */
  statusId?(obj: T): string | undefined;
}

/**
 * The ids an object claims: the external-id annotation and the kind's spec id. The cache
 * runs it on every stored object of the kind, so it allocates no more than its answer.
 */
export function claimedIds(obj: KubeObject, specId: string | undefined): string[] {
  const ready = getCondition(
    (obj as { status?: { conditions?: Parameters<typeof getCondition>[0] } }).status?.conditions,
    "Ready",
  );
  // A claimant refused for its binding holds nothing: it cannot block the rightful one.
  if (isBindingRefusal(ready?.reason)) return [];
  const annotated = obj.metadata?.annotations?.[ANNOTATIONS.externalId]?.trim();
  const spec = specId?.trim();
  if (!annotated) return spec ? [spec] : [];
  return spec && spec !== annotated ? [annotated, spec] : [annotated];
}

/** The index function of {@link BOUND_ID_INDEX} for a managed kind. */
export function boundIdIndex<T extends ManagedObject>(kind: BindingKind<T>): IndexFunc {
  return (o: KubeObject) => claimedIds(o, kind.adoptId?.(o as unknown as T));
}

/** "the remote resource of this NasVolume". */
function what<T extends ManagedObject>(kind: BindingKind<T>): string {
  return `the remote resource of this ${kind.resource.kind}`;
}

/** The refusal when an earlier object of the cluster claims `id` (no service call). */
export function bindingConflict<T extends ManagedObject>(
  cache: CacheReader,
  kind: BindingKind<T>,
  obj: T,
  id: string,
): BindingRefusal | undefined {
  const claimants = cache.byIndex(kind.resource, BOUND_ID_INDEX, id);
  const statusId = kind.statusId?.bind(kind);
  return decideFirstBinder(
    obj,
    id,
    claimants,
    what(kind),
    kind.resource.kind,
    (o) => statusId?.(o as unknown as T) === id,
  );
}

/**
 * Whether `obj` is bound to `remote` by hand (adopted), not by its own create: by the
 * spec's id, or to a resource without this object's owner mark (a kind whose client reads
 * no marks: by the spec's id only).
 */
export function boundByHand<T extends ManagedObject, R>(
  client: { ownerOf?(remote: R): OwnerMark | UnreadMark | undefined },
  kind: BindingKind<T>,
  obj: T,
  remote: R,
): boolean {
  if (kind.adoptId?.(obj) !== undefined) return true;
  if (!client.ownerOf) return false;
  const { namespace = "", name = "" } = obj.metadata ?? {};
  const mark = client.ownerOf(remote);
  return !mark || "unread" in mark || mark.object !== ownerMark(namespace, name).object;
}

/** The refusal when the record's owner mark does not let `obj` act on it (no `ownerOf`: none). */
export function ownershipRefusal<T extends ManagedObject, R>(
  client: { ownerOf?(remote: R): OwnerMark | UnreadMark | undefined },
  kind: BindingKind<T>,
  obj: T,
  id: string,
  remote: R,
  options: { readonly adoptionNamespaces?: readonly string[] },
  ownCreate = false,
): BindingRefusal | undefined {
  const ownerOf = client.ownerOf?.bind(client);
  if (!ownerOf) return undefined;
  const namespace = obj.metadata?.namespace ?? "";
  return decideOwnership({
    namespace,
    mark: ownerOf(remote),
    alreadyBound: kind.statusId?.(obj) === id,
    ownCreate,
    adoptionAllowed: mayAdopt(options.adoptionNamespaces ?? [], namespace),
    what: `${what(kind)} (${id})`,
  });
}
