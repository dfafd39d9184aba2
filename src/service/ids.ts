/**
 * What an id of the service may look like, wherever one enters the operator (a service
 * answer, the `aidc.io/external-id` annotation, `spec.storageId`, `spec.instanceId`)
 * and before one becomes a path segment. The spec shows no id format; ids seen are
 * `nas-000001`, UUIDs and numbers, so the pattern allows letters, digits and `. _ : -`,
 * starting with a letter, a digit or `_`: an id can never be `.` or `..` (which would
 * move a request to another path), nor hold `/`, `?`, `#`, `%` or white space.
 */

/** The pattern every id must match (also in the CRDs, src/crds/fields.ts). */
export const SERVICE_ID_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,127}$/;

/** The pattern in words, for messages. */
export const SERVICE_ID_RULE =
  "letters, digits and . _ : -, starting with a letter, a digit or _, at most 128 characters";

/** True when `value` is a well-formed service id. */
export function isServiceId(value: string): boolean {
  return SERVICE_ID_PATTERN.test(value);
}

/** `value` quoted for a message, shortened so that a hostile id cannot flood it. */
export function quoteId(value: string): string {
  return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
}
