/**
 * Object writes with optimistic concurrency, each conditioned on the resourceVersion
 * of the object as read (from the cache), so a decision made on an old version is
 * never written: status as a minimal merge patch (RFC 7386), skipped when nothing
 * changed; annotations (with the finalizer, when it is added in the same write). The
 * finalizer updates of their own and spec patches are in lifecycle-writes.ts.
 */
import { RetryableError } from "./errors.js";
import type { KubeClient } from "./kube.js";
import { isConflict } from "./kube-errors.js";
import { type KubeObject, keyOf, type ResourceDescriptor } from "./resource.js";

/** A JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The value as it will travel over the wire: `undefined` fields dropped, Dates as strings. */
export function toJson(value: unknown): Json | undefined {
  if (value === undefined) return undefined;
  return JSON.parse(JSON.stringify(value)) as Json;
}

/** Deep equality of two JSON values (object key order ignored, array order significant). */
export function jsonEqual(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true;
  if (a === null || b === null || a === undefined || b === undefined) return false;
  if (typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  }
  const ao = a as Record<string, Json>;
  const bo = b as Record<string, Json>;
  const keys = Object.keys(ao);
  if (keys.length !== Object.keys(bo).length) return false;
  return keys.every((k) => k in bo && jsonEqual(ao[k], bo[k]));
}

function isObject(v: Json | undefined): v is { [key: string]: Json } {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * The RFC 7386 merge patch that turns `from` into `to`: changed fields set, vanished
 * fields `null`, nested objects diffed, arrays replaced whole. Undefined when equal.
 */
export function mergePatch(from: Json | undefined, to: Json | undefined): Json | undefined {
  if (jsonEqual(from, to)) return undefined;
  if (!isObject(from) || !isObject(to)) return to === undefined ? null : to;
  const patch: { [key: string]: Json } = {};
  for (const key of Object.keys(from)) if (!(key in to)) patch[key] = null;
  for (const [key, value] of Object.entries(to)) {
    const sub = mergePatch(from[key], value);
    if (sub !== undefined) patch[key] = sub;
  }
  return patch;
}

/**
 * Drops `null` object fields recursively (array items stay). A merge patch cannot store
 * a null field (null means "remove"), so a desired status with nulls must be compared
 * without them, or it would never equal what the server keeps.
 */
export function withoutNulls(value: Json | undefined): Json | undefined {
  if (Array.isArray(value)) return value.map((v) => withoutNulls(v) ?? null);
  if (!isObject(value)) return value;
  const out: { [key: string]: Json } = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === null) continue;
    const w = withoutNulls(v);
    if (w !== undefined) out[k] = w;
  }
  return out;
}

/** A write refused because the object changed since it was read (409). Retryable. */
export class ConflictError extends RetryableError {
  constructor(what: string, cause: unknown) {
    super("Conflict", `${what}: the object changed since it was read; will retry`, { cause });
    this.name = "ConflictError";
  }
}

/** What {@link patchStatus} did. */
export interface StatusPatchResult<T extends KubeObject> {
  /** False when the status already equalled the desired one and nothing was sent. */
  written: boolean;
  /** The object after the write (the input object when nothing was written). */
  object: T;
}

/**
 * Makes `obj.status` equal to `status` through the status subresource with a minimal
 * merge patch (vanished fields removed); nothing is sent when the two are equal as JSON
 * (`undefined` and `null` fields count as absent). A status computed from a stale
 * object fails with {@link ConflictError} instead of overwriting newer data.
 */
export async function patchStatus<T extends KubeObject>(
  kube: KubeClient,
  res: ResourceDescriptor,
  obj: T,
  status: unknown,
): Promise<StatusPatchResult<T>> {
  const current = withoutNulls(toJson(obj.status)) ?? {};
  const desired = withoutNulls(toJson(status)) ?? {};
  if (jsonEqual(current, desired)) return { written: false, object: obj };
  const patch = mergePatch(current, desired) as Json;
  try {
    const object = await kube.patch<T>(
      res,
      keyOf(obj),
      { metadata: { resourceVersion: obj.metadata?.resourceVersion }, status: patch },
      { subresource: "status" },
    );
    return { written: true, object };
  } catch (err) {
    if (isConflict(err)) throw new ConflictError("status update", err);
    throw err;
  }
}

/**
 * Sets (string) or removes (null) annotations; {@link ConflictError} when the object
 * changed since it was read. With `options.finalizer`, the same write adds that
 * finalizer when `obj` lacks it (the whole list, safe under the resourceVersion
 * condition): one request instead of two. Returns the updated object.
 */
export async function setAnnotations<T extends KubeObject>(
  kube: KubeClient,
  res: ResourceDescriptor,
  obj: T,
  annotations: Record<string, string | null>,
  options: { finalizer?: string } = {},
): Promise<T> {
  const { finalizer } = options;
  const finalizers =
    finalizer && !hasFinalizer(obj, finalizer)
      ? { finalizers: [...(obj.metadata?.finalizers ?? []), finalizer] }
      : {};
  try {
    return await kube.patch<T>(res, keyOf(obj), {
      metadata: { resourceVersion: obj.metadata?.resourceVersion, annotations, ...finalizers },
    });
  } catch (err) {
    if (isConflict(err)) throw new ConflictError("annotation update", err);
    throw err;
  }
}

/** True when the object lists `finalizer`. */
export function hasFinalizer(obj: KubeObject, finalizer: string): boolean {
  return obj.metadata?.finalizers?.includes(finalizer) ?? false;
}
