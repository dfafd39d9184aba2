/**
 * What the kinds' wire shapes share (each kind's view is in its module of ./kinds): the
 * two timestamp forms (tasks and CCI `YYYY-MM-DD HH:MM:SS`, NAS ISO 8601 with `Z`), so
 * that clients meet the variants the real service shows, and the subscription results.
 */
import { toServiceTimestamp } from "../service/schemas/primitives.js";
import type { SubscriptionRecord } from "./records.js";
import type { SubscriptionResultShape } from "./state.js";

/** A time in the service's naive form (`YYYY-MM-DD HH:MM:SS`), "" when unset. */
export const naive = (ms: number | undefined): string =>
  ms === undefined ? "" : toServiceTimestamp(new Date(ms));
/** A time in ISO 8601 with `Z`. */
export const iso = (ms: number): string => new Date(ms).toISOString();

/** The canonical subscription result (docs/service-assumptions.md). */
export function subscriptionView(s: SubscriptionRecord): Record<string, unknown> {
  if (!s.resolved) return { key: s.key, state: "Pending" };
  return {
    key: s.key,
    state: s.outcome,
    ...(s.outcome === "Succeeded" && s.instanceId ? { instanceId: s.instanceId } : {}),
    ...(s.message ? { message: s.message } : {}),
  };
}

const INTEGER_STATES = { Pending: 1, Succeeded: 2, Failed: 3 } as const;
const RENAMED_STATES = { Pending: "PENDING", Succeeded: "DONE", Failed: "FAILED" } as const;

/** A subscription result in `shape` (see EmulatorBehaviour.subscriptionResultShape). */
export function subscriptionResultView(
  s: SubscriptionRecord,
  shape: SubscriptionResultShape,
): Record<string, unknown> {
  const canonical = subscriptionView(s) as { state: keyof typeof INTEGER_STATES };
  if (shape === "canonical") return canonical;
  const { key, state, instanceId, message } = canonical as typeof canonical & {
    key: string;
    instanceId?: string;
    message?: string;
  };
  if (shape === "integerStatus") {
    return {
      key,
      status: INTEGER_STATES[state],
      ...(instanceId ? { instanceId } : {}),
      ...(message ? { message } : {}),
    };
  }
  return {
    orderKey: key,
    orderState: RENAMED_STATES[state],
    ...(instanceId ? { createdResourceId: instanceId } : {}),
    ...(message ? { remark: message } : {}),
  };
}
