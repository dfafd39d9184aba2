/**
 * The subscription results of the asynchronous creates (a NAS subscription, a task
 * create), in the shape the emulator is set to answer (EmulatorBehaviour).
 */
import { notFound } from "./handler-context.js";
import type { EmulatorState } from "./state.js";
import { subscriptionResultView } from "./views.js";

/** The result of subscription `key` of `kind` in the configured shape, or a 404 for an unknown key. */
export function subscriptionResult(
  state: EmulatorState,
  key: string,
  kind: "training" | "nas",
): unknown {
  const sub = state.subscriptions.get(key);
  if (!sub || sub.kind !== kind) throw notFound(`${kind} subscription result key`, key);
  return subscriptionResultView(sub, state.behaviour.subscriptionResultShape);
}
