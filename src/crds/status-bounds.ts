/**
 * The bounds of what the service's answers put into an object: the service documents
 * no length for its strings and no size for its lists, so every string is cut where it
 * enters a status (or a catalog object's spec) and every list keeps a bounded number of
 * entries. The sizes these bounds give each kind's status are held by
 * src/controllers/status-size.test.ts and stated in docs/custom-resources.md.
 */

/** Longest short value kept: ids, names, codes, states, times, prices, types. */
export const REMOTE_VALUE_CHARS = 256;
/** Longest env variable name kept (names only: a value never enters a status). */
export const REMOTE_ENV_NAME_CHARS = 128;
/** Longest address kept: image references, URLs, mount and export paths, endpoints. */
export const REMOTE_ADDRESS_CHARS = 1024;
/** Longest free text kept: descriptions, error details, suggestions, records, commands. */
export const REMOTE_TEXT_CHARS = 1024;

/** The mark that ends a cut string. */
export const CUT_MARK = "…";

/**
 * `value` when it has at most `max` characters (UTF-16 units), else its first
 * characters and {@link CUT_MARK} in `max` (a surrogate pair is never split).
 * Undefined stays undefined.
 */
export function capText<T extends string | undefined>(value: T, max: number): T {
  if (value === undefined || value.length <= max) return value;
  let end = max - CUT_MARK.length;
  const last = value.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${value.slice(0, end)}${CUT_MARK}` as T;
}

/** {@link capText} at {@link REMOTE_VALUE_CHARS}. */
export function capValue<T extends string | undefined>(value: T): T {
  return capText(value, REMOTE_VALUE_CHARS);
}

/** {@link capText} at {@link REMOTE_ENV_NAME_CHARS}. */
export function capEnvName(name: string): string {
  return capText(name, REMOTE_ENV_NAME_CHARS);
}

/** {@link capText} at {@link REMOTE_ADDRESS_CHARS}. */
export function capAddress<T extends string | undefined>(value: T): T {
  return capText(value, REMOTE_ADDRESS_CHARS);
}

/** {@link capText} at {@link REMOTE_TEXT_CHARS}. */
export function capFreeText<T extends string | undefined>(value: T): T {
  return capText(value, REMOTE_TEXT_CHARS);
}
