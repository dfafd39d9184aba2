/**
 * A managed object and the runtime's KubeObject are the same JSON object under two
 * types: the casts between them, in one place.
 */
import type { KubeObject } from "../../runtime/resource.js";
import type { ManagedObject } from "./call.js";

/** A managed object as the runtime's writers take it (the same JSON object). */
export function toKube(obj: ManagedObject): KubeObject {
  return obj as unknown as KubeObject;
}

/** An object from the runtime as the kind's type (the cache and writers return JSON). */
export function fromKube<T extends ManagedObject>(obj: KubeObject): T {
  return obj as unknown as T;
}
