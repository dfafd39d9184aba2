/**
 * Who may bind an object to which remote resource (docs/install.md, Security model).
 * Every namespace shares the operator's one API key, so the operator itself keeps
 * tenants apart:
 *
 * - One binder per remote resource: an id is bound to at most one object in the
 *   cluster. The index {@link BOUND_ID_INDEX} lists, across namespaces, the objects of a
 *   kind that claim an id; the first claimant (creationTimestamp, then uid) wins, and a
 *   later one is refused with {@link ALREADY_BOUND} before any service call. Objects
 *   already refused for their binding do not count, so a refused claimant cannot block
 *   the rightful one.
 * - Adoption: binding to a resource the operator did not create for the object (a
 *   hand-set `aidc.io/external-id`, NasVolume `spec.storageId`, a raw `storageId`
 *   mount, every CciInstance) needs the namespace in `adoption.namespaces`, except for
 *   resources the namespace's own objects created (their owner mark says so).
 * - Ownership marks: what the operator creates carries {@link ownerMark} of the
 *   namespace and object (hashes, so another tenant reading the service does not learn
 *   names); a bound resource whose mark names another namespace is refused before
 *   anything is done to it.
 *
 * Pure: the callers pass the cache's candidates and the remote's mark.
 */
import { createHash } from "node:crypto";
import type { KubeObject } from "../../runtime/resource.js";

/** Index name: objects of a kind by every remote id they claim. */
export const BOUND_ID_INDEX = "byBoundId";

/** The setting that permits adoption, as refusals name it. */
export const ADOPTION_SETTING =
  "adoption.namespaces (operator config; chart value adoption.namespaces)";

/** Terminal reasons of a refused binding (each ends in Refused). */
export const BINDING_REFUSALS = {
  /** Another object in the cluster is bound to the id. */
  alreadyBound: "AlreadyBoundRefused",
  /** The namespace may not adopt what the operator did not create for it. */
  adoption: "AdoptionRefused",
  /** The remote resource's owner mark names another namespace. */
  ownedElsewhere: "OwnedElsewhereRefused",
} as const;

/** One refusal of a binding: a terminal condition, and nothing is called. */
export interface BindingRefusal {
  reason: (typeof BINDING_REFUSALS)[keyof typeof BINDING_REFUSALS];
  message: string;
}

/** True when `reason` is one of {@link BINDING_REFUSALS}. */
export function isBindingRefusal(reason: string | undefined): boolean {
  return Object.values(BINDING_REFUSALS).includes(reason as BindingRefusal["reason"]);
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

/**
 * The refusal of raw `storageId` mounts: every id must be one a Ready NasVolume of the
 * namespace is bound to (`own`), unless the namespace may adopt.
 */
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

/** The owner of a remote resource as its mark records it (hashes, not names). */
export interface OwnerMark {
  /** Hash of the namespace. */
  namespace: string;
  /** Hash of `namespace/name`. */
  object: string;
}

/** The mark of an object `namespace/name`: stable, and without the names in clear. */
export function ownerMark(namespace: string, name: string): OwnerMark {
  return {
    namespace: hash16(`aidc.io/namespace:${namespace}`),
    object: hash16(`${namespace}/${name}`),
  };
}

/** The mark as text (`<namespace hash>.<object hash>`), for an env var or a description. */
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
  /** The remote's mark; undefined when it carries none (not created by the operator). */
  mark: OwnerMark | undefined;
  /** The object's status already records this id: the operator bound it earlier. */
  alreadyBound: boolean;
  /** The namespace may adopt ({@link mayAdopt}). */
  adoptionAllowed: boolean;
  /** What the id is, for messages ("NAS storage-1"). */
  what: string;
}

/**
 * Decides whether an object may act on the remote resource it is bound to: a mark of
 * its own namespace is its own (a restored object, a crash recovery, a re-adoption in
 * the namespace); a mark of another namespace is refused; no mark is an adoption, kept
 * when the operator had bound it before (the status says so) and otherwise allowed only
 * where adoption is.
 */
export function decideOwnership(input: OwnershipInput): BindingRefusal | undefined {
  const own = ownerMark(input.namespace, "").namespace;
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
 * Refuses `self`'s claim on `id` when another claimant (from the index) precedes it:
 * one whose status already records the id (`verified`: the operator bound it, and
 * tenants cannot write status) comes first; then the older (creationTimestamp, whole
 * seconds), then the smaller uid. The other object is named only when it is in the
 * same namespace: naming another tenant's object would tell this tenant what it has.
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
