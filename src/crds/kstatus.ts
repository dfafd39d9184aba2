/**
 * The kstatus conditions (`Reconciling`, `Stalled`) that Flux, kpt and `kubectl wait`
 * read, derived from the other conditions of an object by the reason table
 * (reasons.ts). Both are "abnormal-true" and, as in Flux's own objects, present only
 * when True:
 *
 * - `Stalled=True` when `Ready` or `Synced` is not True with a Terminal reason: the
 *   operator will not get further without a person. Its reason is that reason.
 * - `Reconciling=True` otherwise, when any condition has an UnderWay reason (a
 *   create, an update, a deletion, a retry, a wait for a referenced object). Its
 *   reason is that reason.
 *
 * With neither, kstatus reads `Ready`: True is Current, anything else InProgress.
 */
import type { ReasonState } from "./reasons.js";

/** What the derivation reads of the reason table (`REASONS` of src/crds/index.ts). */
export interface ReasonStates {
  /** The state of `reason`, or undefined for a string that is not one of ours. */
  stateOf(reason: string): ReasonState | undefined;
}

/** The parts of a condition the derivation reads. */
export interface ConditionView {
  type: string;
  status: string;
  reason: string;
  message: string;
}

/** A kstatus condition to set (always status True). */
export interface KstatusCondition {
  type: "Reconciling" | "Stalled";
  status: "True";
  reason: string;
  message: string;
}

/** The condition types this module owns. */
export const KSTATUS_TYPES = ["Reconciling", "Stalled"] as const;

/** The conditions whose Terminal reason stalls the object. */
const STALLING_TYPES = ["Ready", "Synced"];

function describe(c: ConditionView): string {
  return `${c.type} is ${c.status}${c.message ? `: ${c.message}` : ""}`;
}

/**
 * The kstatus condition implied by `conditions` (their Reconciling and Stalled are
 * ignored) under the reason table `reasons`: Stalled, Reconciling, or none.
 */
export function kstatusCondition(
  conditions: readonly ConditionView[],
  reasons: ReasonStates,
): KstatusCondition | undefined {
  const others = conditions.filter((c) => !(KSTATUS_TYPES as readonly string[]).includes(c.type));
  const stalled = STALLING_TYPES.map((t) => others.find((c) => c.type === t)).find(
    (c) => c && c.status !== "True" && reasons.stateOf(c.reason) === "Terminal",
  );
  if (stalled) {
    return { type: "Stalled", status: "True", reason: stalled.reason, message: describe(stalled) };
  }
  const busy = others.find((c) => reasons.stateOf(c.reason) === "UnderWay");
  if (busy) {
    return { type: "Reconciling", status: "True", reason: busy.reason, message: describe(busy) };
  }
  return undefined;
}
