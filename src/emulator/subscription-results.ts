/**
 * The subscription results of the asynchronous creates (a NAS subscription, a task
 * create), in the shape the emulator is set to answer (EmulatorBehaviour).
 */
import { notFound } from "./handler-context.js";
import type { EmulatorState } from "./state.js";
import { subscriptionResultView } from "./views.js";

/**
 * The result of subscription `key` of `kind` in the configured shape, or a 404 for an
 * unknown key, and for one resolved longer ago than `subscriptionResultRetentionMs`.
 */
export function subscriptionResult(
  state: EmulatorState,
  key: string,
  kind: "training" | "nas",
): unknown {
  const sub = state.subscriptions.get(key);
  const retention = state.behaviour.subscriptionResultRetentionMs;
  const forgotten =
    retention > 0 && sub?.resolvedAt !== undefined && state.now() - sub.resolvedAt >= retention;
  if (!sub || sub.kind !== kind || forgotten) {
    throw notFound(`${kind} subscription result key`, key);
  }
  return subscriptionResultView(sub, state.behaviour.subscriptionResultShape);
}
