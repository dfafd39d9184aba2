/**
 * What a status holds: its conditions (metav1.Condition, and kstatus's Reconciling and
 * Stalled as the reason table derives them), and the bounds of its strings. The service
 * documents no length for its strings, so every string it answers is cut where it
 * enters a status (or a catalog object's spec), and a condition's message where it is
 * set. The sizes these bounds give each kind's status are held by
 * src/controllers/status-size.test.ts and stated in docs/custom-resources.md.
 */
import { rfc3339 } from "./resource.js";

/** The status of a condition, as metav1.Condition spells it. */
export type ConditionStatus = "True" | "False" | "Unknown";

/** metav1.Condition. */
export interface Condition {
  type: string;
  status: ConditionStatus;
  /** PascalCase. */
  reason: string;
  message: string;
  /** RFC 3339; changes only when `status` changes. */
  lastTransitionTime: string;
  /** The metadata.generation the condition was computed for. */
  observedGeneration?: number;
}

/** Longest short value kept: ids, names, codes, states, times, prices, types. */
export const REMOTE_VALUE_CHARS = 256;
/** Longest env variable name kept (names only: a value never enters a status). */
export const REMOTE_ENV_NAME_CHARS = 128;
/** Longest address kept: image references, URLs, mount and export paths, endpoints. */
export const REMOTE_ADDRESS_CHARS = 1024;
/** Longest free text kept: descriptions, error details, suggestions, records, commands. */
export const REMOTE_TEXT_CHARS = 1024;
/**
 * The longest message a condition keeps (metav1.Condition allows 32768): a longer one,
 * e.g. quoting an answer of the service, ends cut.
 */
export const MAX_CONDITION_MESSAGE_CHARS = 1024;

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

/** {@link capText} at {@link MAX_CONDITION_MESSAGE_CHARS}. */
export function conditionMessage(message: string): string {
  return capText(message, MAX_CONDITION_MESSAGE_CHARS);
}

/** What a reconciler states; the times and generation are filled in by {@link setCondition}. */
export type ConditionInput = Pick<Condition, "type" | "status" | "reason" | "message">;

/**
 * Returns a new condition list with `cond` set (the input is not changed, so cached
 * objects can be passed). An existing condition of the same type keeps its position and,
 * when its status is unchanged, its lastTransitionTime; reason, message and
 * observedGeneration are always updated (the message cut at
 * {@link MAX_CONDITION_MESSAGE_CHARS}). A new type is appended with `now` as its
 * transition time.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  cond: ConditionInput,
  generation: number | undefined,
  now: Date,
): Condition[] {
  const list = [...(conditions ?? [])];
  const i = list.findIndex((c) => c.type === cond.type);
  const prev = i >= 0 ? list[i] : undefined;
  const next: Condition = {
    type: cond.type,
    status: cond.status,
    reason: cond.reason,
    message: conditionMessage(cond.message),
    lastTransitionTime:
      prev && prev.status === cond.status ? prev.lastTransitionTime : rfc3339(now),
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
  if (i >= 0) list[i] = next;
  else list.push(next);
  return list;
}

/** The condition of `type`, if present. */
export function getCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** True when the condition of `type` exists with status True. */
export function isConditionTrue(
  conditions: readonly Condition[] | undefined,
  type: string,
): boolean {
  return getCondition(conditions, type)?.status === "True";
}

/** Returns a new list without the condition of `type`. */
export function removeCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}

/**
 * What {@link withKstatusConditions} asks of a reason table (`REASONS` of
 * src/crds/index.ts, whose src/crds/reason-table.ts derives it from the reasons' states):
 * the kstatus condition, Reconciling or Stalled, that `conditions` imply, if any.
 */
export interface KstatusDerivation {
  kstatusCondition(conditions: readonly Condition[]): ConditionInput | undefined;
}

/** The kstatus condition types, present only when True. */
const KSTATUS_TYPES = ["Reconciling", "Stalled"] as const;

/**
 * Returns `conditions` with Reconciling or Stalled set as the others imply under
 * `reasons`, and the one not implied removed. Call it last, on the list that is written.
 */
export function withKstatusConditions(
  conditions: readonly Condition[] | undefined,
  reasons: KstatusDerivation,
  generation: number | undefined,
  now: Date,
): Condition[] {
  const implied = reasons.kstatusCondition(conditions ?? []);
  let list = [...(conditions ?? [])];
  for (const type of KSTATUS_TYPES) {
    if (implied?.type !== type) list = removeCondition(list, type);
  }
  return implied ? setCondition(list, implied, generation, now) : list;
}
