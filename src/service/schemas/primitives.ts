/**
 * The values of the service's wire and their rules. Field schemas accept the spec's
 * variants (numbers as text, `null` for absent, a Java-style `empty` boolean in maps) and
 * yield one clean type, so an odd spelling never fails a whole answer. Ids: one pattern,
 * checked wherever an id enters and before it becomes a path segment, excludes `.`, `..`,
 * `/`, `?`, `#`, `%` and white space. Times are written RFC 3339 UTC in whole seconds.
 * Enum values (enums.ts) match ignoring case, `_`, `-` and spaces.
 */
import { z } from "zod";
import { ServiceInvalidIdError, ServiceInvalidRequestError } from "../errors.js";

/** The pattern every id must match (also in the CRDs, src/crds/fields.ts). */
export const SERVICE_ID_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,127}$/;

export const SERVICE_ID_RULE =
  "letters, digits and . _ : -, starting with a letter, a digit or _, at most 128 characters";

export function isServiceId(value: string): boolean {
  return SERVICE_ID_PATTERN.test(value);
}

/** `value` quoted for a message, shortened so that a hostile id cannot flood it. */
export function quoteId(value: string): string {
  return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
}

/** `?` and the query of a call (its undefined values left out), or "" when it has none. */
export function queryString(
  query: Record<string, string | number | boolean | undefined> | undefined,
): string {
  if (!query) return "";
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
  const text = params.toString();
  return text ? `?${text}` : "";
}

/**
 * `template` of endpoint `name` with its `{param}`s URI-encoded; throws (nothing is sent)
 * for a missing or empty value (no `/v1/x//detail`) and for a value that is not an id
 * (encoding leaves a segment `.` or `..` as it is: another path).
 */
export function renderPath(name: string, template: string, params: Record<string, string> = {}) {
  return template.replace(/\{(\w+)\}/g, (_, key: string) => {
    const value = params[key];
    if (value === undefined || value === "") {
      throw new ServiceInvalidRequestError(
        `invalid ${name} request: missing value for path parameter {${key}} of ${template}`,
        { endpoint: name },
      );
    }
    if (!isServiceId(value)) {
      throw new ServiceInvalidIdError(
        `invalid ${name} request: the ${key} ${quoteId(value)} is not a well-formed service id (${SERVICE_ID_RULE}); nothing was sent`,
        { endpoint: name },
      );
    }
    return encodeURIComponent(value);
  });
}

const NAIVE = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?$/;
const ZONED = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})$/i;
const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;

export function toRfc3339(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

/**
 * A service timestamp as RFC 3339 UTC: `YYYY-MM-DD HH:MM:SS` (taken as UTC: the spec names
 * no zone), ISO 8601, a bare date or epoch ms; undefined for anything else.
 */
export function normalizeTimestamp(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === "number") {
    return Number.isFinite(value) ? toRfc3339OrUndefined(new Date(value)) : undefined;
  }
  if (typeof value !== "string") return undefined;
  const text = value.trim();
  if (text === "") return undefined;
  if (/^\d{12,14}$/.test(text)) return toRfc3339OrUndefined(new Date(Number(text)));
  const naive = NAIVE.exec(text);
  if (naive) {
    const [, y, mo, d, h, mi, s] = naive.map(Number) as number[];
    return toRfc3339OrUndefined(
      new Date(Date.UTC(y as number, (mo as number) - 1, d, h, mi, s)),
      text.slice(0, 10),
    );
  }
  if (ZONED.test(text)) return toRfc3339OrUndefined(new Date(text));
  const dateOnly = DATE_ONLY.exec(text);
  if (dateOnly) return toRfc3339OrUndefined(new Date(`${text}T00:00:00Z`), text);
  return undefined;
}

/** Rejects invalid dates, and calendar overflow such as 2024-02-31 when `day` is given. */
function toRfc3339OrUndefined(date: Date, day?: string): string | undefined {
  if (Number.isNaN(date.getTime())) return undefined;
  const out = toRfc3339(date);
  if (day !== undefined && out.slice(0, 10) !== day) return undefined;
  return out;
}

/** Formats a time the way the service writes it: `YYYY-MM-DD HH:MM:SS` (UTC). */
export function toServiceTimestamp(date: Date): string {
  return date.toISOString().slice(0, 19).replace("T", " ");
}

function scalarToString(v: unknown): unknown {
  if (v === null) return undefined;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return v;
}

function toNumber(v: unknown): unknown {
  if (v === null) return undefined;
  if (typeof v === "string") {
    const t = v.trim();
    if (t === "") return undefined;
    const n = Number(t);
    return Number.isFinite(n) ? n : v;
  }
  return v;
}

function toBoolean(v: unknown): unknown {
  if (v === null) return undefined;
  if (v === "true" || v === 1 || v === "1") return true;
  if (v === "false" || v === 0 || v === "0") return false;
  return v;
}

/** An optional string; numbers and booleans become their text, null absent. */
export const optionalString = z.preprocess(scalarToString, z.string().optional());

/** A required non-empty string (ids); a number is accepted as its text. */
export const requiredString = z.preprocess(scalarToString, z.string().min(1));

/** A required service id (a number as its text): an answer with an id such as `..` is malformed. */
export const idString = z.preprocess(
  scalarToString,
  z.string().regex(SERVICE_ID_PATTERN, `expected a service id (${SERVICE_ID_RULE})`),
);

/** An optional integer; a numeric string is converted, null and "" absent. */
export const optionalInt = z.preprocess(toNumber, z.int().optional());

/** An optional boolean; "true"/"false" and 1/0 are accepted, null absent. */
export const optionalBoolean = z.preprocess(toBoolean, z.boolean().optional());

/** An optional timestamp as RFC 3339 UTC (`normalizeTimestamp`). */
export const optionalTimestamp = z.preprocess(normalizeTimestamp, z.string().optional());

/**
 * A map of string to string (env): drops a boolean `empty` and null values, writes other
 * values as text (objects as JSON); null or a non-object becomes absent.
 */
export const optionalStringMap = z.preprocess((v) => {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return undefined;
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(v)) {
    if (value === null || value === undefined) continue;
    if (key === "empty" && typeof value === "boolean") continue;
    out[key] = typeof value === "object" ? JSON.stringify(value) : String(value);
  }
  return out;
}, z.record(z.string(), z.string()).optional());

/** An optional array of `item`; null becomes absent. */
export function optionalArray<T extends z.ZodType>(item: T) {
  return z.preprocess((v) => (v === null ? undefined : v), z.array(item).optional());
}

/** An optional object; null becomes absent. */
export function optionalObject<T extends z.ZodType>(schema: T) {
  return z.preprocess((v) => (v === null ? undefined : v), schema.optional());
}

/** `value` lower-cased without `_`, `-` and spaces: how words of the service compare. */
export function fold(value: string): string {
  return value.toLowerCase().replace(/[\s_-]/g, "");
}

/** The member of `values` equal to `input` ignoring case, `_`, `-` and spaces. */
export function matchEnum<T extends string>(
  values: readonly T[],
  input: string | undefined,
): T | undefined {
  if (input === undefined) return undefined;
  const folded = fold(input);
  return values.find((v) => fold(v) === folded);
}

/** A request-side enum: any case of a member yields the member. */
export function lenientEnum<T extends string>(values: readonly [T, ...T[]]) {
  return z.string().transform((input, ctx): T => {
    const hit = matchEnum(values, input);
    if (hit === undefined) {
      ctx.addIssue({
        code: "custom",
        message: `"${input}" is not one of ${values.join(", ")} (any letter case)`,
      });
      return z.NEVER;
    }
    return hit;
  });
}

/**
 * A response-side enum: a known member in any spelling becomes canonical, an unknown value
 * is kept as `optionalString` reads it (the service's lists are open-ended).
 */
export function responseEnum<T extends string>(values: readonly T[]) {
  return z.preprocess(
    (v) => (typeof v === "string" ? (matchEnum(values, v) ?? v) : v),
    optionalString,
  );
}

/** The first three zod issues as `data.path: message`, joined by "; ". */
export function describeIssues(error: z.ZodError, root = "data"): string {
  const shown = error.issues.slice(0, 3).map((issue) => {
    const path = issue.path
      .map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`))
      .join("");
    return `${root}${path}: ${issue.message}`;
  });
  const more = error.issues.length > 3 ? ` (and ${error.issues.length - 3} more)` : "";
  return shown.join("; ") + more;
}
