/**
 * What the runtime knows about Kubernetes objects: a kind's REST coordinates (src/crds
 * describes each kind with a {@link ResourceDescriptor}), keys, fields as JSON (equality,
 * RFC 7386 merge patches), and time (the {@link Clock}, {@link withDeadline}).
 */

/** REST coordinates of one kind. */
export interface ResourceDescriptor {
  /** API group; `""` for the core group (`/api/v1`). */
  readonly group: string;
  readonly version: string;
  /** Lower-case plural of URLs, e.g. `leases`. */
  readonly plural: string;
  readonly kind: string;
  readonly namespaced: boolean;
  /** A label selector: this descriptor's informer cache (its own) holds only what it selects. */
  readonly labelSelector?: string;
}

/** The ObjectMeta fields the runtime reads and writes. */
export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: unknown[];
  /** Server-side apply bookkeeping; the cache drops it. */
  managedFields?: unknown[];
}

/** Any Kubernetes object as JSON; the cache's are deeply frozen (copy before changing). */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [field: string]: unknown;
}

/** Identity of one object: `namespace` is `""` for cluster-scoped kinds. */
export interface ObjectKey {
  readonly namespace: string;
  readonly name: string;
}

/** `apiVersion` of a kind, e.g. `aidc.io/v1alpha1` or `v1`. */
export function apiVersionOf(res: ResourceDescriptor): string {
  return res.group ? `${res.group}/${res.version}` : res.version;
}

/** A kind's id for maps and logs: `plural.group` (`plural` for core). */
export function resourceId(res: ResourceDescriptor): string {
  return res.group ? `${res.plural}.${res.group}` : res.plural;
}

/** The id of a descriptor's informer cache: {@link resourceId}, then `?` and its label selector. */
export function cacheId(res: ResourceDescriptor): string {
  return res.labelSelector ? `${resourceId(res)}?${res.labelSelector}` : resourceId(res);
}

/** URL path of a collection or one object; no `namespace`: all (or a cluster-scoped kind). */
export function resourcePath(
  res: ResourceDescriptor,
  namespace?: string,
  name?: string,
  subresource?: string,
): string {
  const base = res.group ? `/apis/${res.group}/${res.version}` : `/api/${res.version}`;
  const ns = res.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : "";
  const obj = name ? `/${encodeURIComponent(name)}` : "";
  const sub = name && subresource ? `/${subresource}` : "";
  return `${base}${ns}/${res.plural}${obj}${sub}`;
}

/** The key of an object: `namespace/name`, or `name` when cluster-scoped. */
export function formatKey(key: ObjectKey): string {
  return key.namespace ? `${key.namespace}/${key.name}` : key.name;
}

export function parseKey(key: string): ObjectKey {
  const slash = key.indexOf("/");
  if (slash < 0) return { namespace: "", name: key };
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

export function keyOf(obj: KubeObject): ObjectKey {
  return { namespace: obj.metadata?.namespace ?? "", name: obj.metadata?.name ?? "" };
}

export function objectKeyString(obj: KubeObject): string {
  return formatKey(keyOf(obj));
}

/** Fills in apiVersion and kind, which list items of core kinds come without. */
export function withKind<T extends KubeObject>(res: ResourceDescriptor, obj: T): T {
  if (obj.apiVersion && obj.kind) return obj;
  return { ...obj, apiVersion: apiVersionOf(res), kind: res.kind };
}

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
 * Drops `null` object fields recursively (array items stay): a merge patch cannot store a
 * null field, so a status with nulls would never equal what the server keeps.
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

/** The time source of the runtime and reconcilers, passed in so that tests control time. */
export interface Clock {
  now(): Date;
}

/** The real clock (follows `Date`, so vitest fake timers move it too). */
export const systemClock: Clock = { now: () => new Date() };

/** RFC 3339 with seconds precision, as metav1.Time serialises (`2024-05-01T10:00:00Z`). */
export function rfc3339(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

/**
 * Settles as `promise` does within `ms` (≤ 0: the next turn), else as `onTimeout()` does.
 * `promise` is not cancelled: a caller that must stop it does so in `onTimeout` (e.g.
 * aborts its signal); its late outcome is ignored.
 */
export async function withDeadline<T, U = T>(
  promise: Promise<T>,
  ms: number,
  onTimeout: () => U | Promise<U>,
): Promise<T | U> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<U>((resolve, reject) => {
    timer = setTimeout(
      () => {
        try {
          resolve(onTimeout());
        } catch (err) {
          reject(err);
        }
      },
      Math.max(0, ms),
    );
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** An answer's body as JSON, or its text when it is not JSON (kept for the error message). */
export function parseBody(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return text;
  }
}
