/**
 * Timestamp normalisation. The service writes times as `YYYY-MM-DD HH:MM:SS` (no zone)
 * and as ISO 8601 with a `Z` suffix; the operator writes RFC 3339 in UTC with second
 * precision (`2024-05-06T07:08:09Z`), the form Kubernetes uses for `metav1.Time`.
 */

const NAIVE = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?$/;
const ZONED = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})$/i;
const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Formats a time as RFC 3339 UTC with whole seconds. */
export function toRfc3339(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

/**
 * Converts a service timestamp to RFC 3339 UTC. Accepts `YYYY-MM-DD HH:MM:SS` (taken as
 * UTC: the spec names no zone), ISO 8601 with `Z` or an offset, a bare date, and epoch
 * milliseconds (number or digit string). Returns undefined for null, "" and values that
 * are not a time, so that one odd field never fails a whole response.
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
