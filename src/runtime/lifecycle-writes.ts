/**
 * The writes an object gets once in its life: its finalizer, added before its remote
 * resource exists and removed once it is gone, and the spec fields the operator fills in
 * late (LateInitialize). Each is conditioned on the resourceVersion of the object as read,
 * as object-writes.ts's are; a finalizer update is computed again after a conflict.
 */
import { isDeepStrictEqual } from "node:util";
import { ConflictError, WriteNotKeptError } from "./errors.js";
import type { KubeClient } from "./kube.js";
import { isConflict, isNotFound } from "./kube-errors.js";
import { type KubeObject, keyOf, type ResourceDescriptor } from "./resource.js";

/**
 * Merge-patches `fields` into the object's spec; {@link ConflictError} when the object
 * changed since it was read, so a user's newer spec is never overwritten;
 * {@link WriteNotKeptError} when its answer does not show a field as written (admission
 * changed it), so that the write is not sent again at each poll.
 */
export async function patchSpec<T extends KubeObject>(
  kube: KubeClient,
  res: ResourceDescriptor,
  obj: T,
  fields: Record<string, unknown>,
): Promise<T> {
  let written: T;
  try {
    written = await kube.patch<T>(res, keyOf(obj), {
      metadata: { resourceVersion: obj.metadata?.resourceVersion },
      spec: fields,
    });
  } catch (err) {
    if (isConflict(err)) throw new ConflictError("spec update", err);
    throw err;
  }
  const spec = (written as { spec?: Record<string, unknown> }).spec ?? {};
  const unkept = Object.keys(fields).filter((k) => !isDeepStrictEqual(spec[k], fields[k]));
  if (unkept.length === 0) return written;
  throw new WriteNotKeptError(
    "spec update",
    unkept.map((k) => `spec.${k}`),
  );
}

const FINALIZER_ATTEMPTS = 10;

/**
 * Adds `finalizer` unless present. On a conflict the object is read again and the list
 * computed anew (up to 10 times), so what others wrote meanwhile is kept. Returns the
 * updated object, or undefined when it no longer exists. Not for an object being deleted.
 */
export function ensureFinalizer<T extends KubeObject>(
  kube: KubeClient,
  res: ResourceDescriptor,
  obj: T,
  finalizer: string,
): Promise<T | undefined> {
  return updateFinalizers(kube, res, obj, (list) =>
    list.includes(finalizer) ? undefined : [...list, finalizer],
  );
}

/**
 * Removes `finalizer` if present, retried on a conflict as {@link ensureFinalizer} is.
 * Undefined when the object is gone (this may have been its last finalizer).
 */
export function removeFinalizer<T extends KubeObject>(
  kube: KubeClient,
  res: ResourceDescriptor,
  obj: T,
  finalizer: string,
): Promise<T | undefined> {
  return updateFinalizers(kube, res, obj, (list) =>
    list.includes(finalizer) ? list.filter((f) => f !== finalizer) : undefined,
  );
}

async function updateFinalizers<T extends KubeObject>(
  kube: KubeClient,
  res: ResourceDescriptor,
  obj: T,
  change: (current: string[]) => string[] | undefined,
): Promise<T | undefined> {
  let current: T | undefined = obj;
  for (let attempt = 1; current; attempt++) {
    const next = change(current.metadata?.finalizers ?? []);
    if (!next) return current;
    try {
      const updated = await kube.patch<T>(res, keyOf(current), {
        metadata: { resourceVersion: current.metadata?.resourceVersion, finalizers: next },
      });
      // Removing the last finalizer of a deleted object deletes it; the answer is its
      // final state, which callers should treat as gone.
      if (updated.metadata?.deletionTimestamp && next.length === 0) return undefined;
      if (change(updated.metadata?.finalizers ?? [])) {
        throw new WriteNotKeptError("finalizer update", [`finalizers ${JSON.stringify(next)}`]);
      }
      return updated;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      if (!isConflict(err)) throw err;
      if (attempt >= FINALIZER_ATTEMPTS) throw new ConflictError("finalizer update", err);
      // A short random pause keeps several writers from colliding again in lockstep.
      await new Promise((r) => setTimeout(r, Math.random() * 20 * attempt));
      current = await kube.get<T>(res, keyOf(current));
    }
  }
  return undefined;
}
