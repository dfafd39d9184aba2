/**
 * The reference resolution step of the generic managed loop (crossplane-runtime's
 * ReferenceResolver): before anything remote, the kind's `resolveReferences` reads the
 * objects the object refers to from the cache (its own namespace only) and answers
 * what the client needs from them, or why the object must wait. The answer goes into
 * `call.refs` and the ReferencesResolved condition.
 */
import type { CacheReader } from "../../runtime/cache.js";
import type { ConditionInput } from "../../runtime/conditions.js";
import type { ResourceDescriptor } from "../../runtime/resource.js";
import type { ManagedObject, ReferenceReader, ReferenceResolution } from "./call.js";
import type { ManagedKind } from "./external-client.js";

/** Type of the condition the step writes. */
export const REFERENCES_RESOLVED = "ReferencesResolved";

/** A {@link ReferenceReader} over `cache` for the objects of `namespace`. */
export function referenceReader(
  cache: CacheReader,
  namespace: string,
  bound: boolean,
): ReferenceReader {
  return {
    bound,
    get: <O>(resource: ResourceDescriptor, name: string) =>
      cache.get(resource, { namespace, name }) as O | undefined,
    list: <O>(resource: ResourceDescriptor) => cache.list(resource, namespace) as O[],
  };
}

/**
 * The resolution of `obj`'s references, or undefined when the kind has no such step.
 * A kind whose references are create-only (`referencesForCreateOnly`) counts as
 * resolved, without references, once the object is `bound` to a remote resource (an
 * id recorded or adopted).
 */
export function resolveStep<T extends ManagedObject, R, Refs>(
  kind: ManagedKind<T, R, Refs>,
  obj: T,
  cache: CacheReader,
  bound: boolean,
): ReferenceResolution<Refs | undefined> | undefined {
  if (!kind.resolveReferences) return undefined;
  if (kind.referencesForCreateOnly && bound) return { resolved: true, refs: undefined };
  return kind.resolveReferences(obj, referenceReader(cache, obj.metadata?.namespace ?? "", bound));
}

/** The ReferencesResolved condition of a resolution. */
export function referencesCondition(resolution: ReferenceResolution<unknown>): ConditionInput {
  return resolution.resolved
    ? { type: REFERENCES_RESOLVED, status: "True", reason: "Resolved", message: "" }
    : {
        type: REFERENCES_RESOLVED,
        status: "False",
        reason: resolution.reason,
        message: resolution.message,
      };
}
