/**
 * JSON value comparison and RFC 7386 merge patches, for status writes that must be
 * skipped when nothing changed and must remove fields that disappeared.
 */

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
