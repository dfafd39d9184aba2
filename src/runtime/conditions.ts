import { rfc3339 } from "./clock.js";

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

/**
 * The longest message a condition keeps (UTF-16 units; metav1.Condition allows 32768):
 * a longer one, e.g. quoting an answer of the service, ends cut with `…`.
 */
export const MAX_CONDITION_MESSAGE_CHARS = 1024;

/** `message` cut at {@link MAX_CONDITION_MESSAGE_CHARS} (never inside a surrogate pair). */
export function conditionMessage(message: string): string {
  if (message.length <= MAX_CONDITION_MESSAGE_CHARS) return message;
  let end = MAX_CONDITION_MESSAGE_CHARS - 1;
  const last = message.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${message.slice(0, end)}…`;
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
