/**
 * The asynchronous creates (a NAS subscription, a task create): their acceptance, and
 * their results in the shape the emulator is set to answer (EmulatorBehaviour).
 */
import { notFound } from "./handler-context.js";
import { createAnswer } from "./id-formats.js";
import type { SubscriptionKind, SubscriptionRecord } from "./records.js";
import type { EmulatorState } from "./state.js";
import { subscriptionResultView } from "./views.js";

/**
 * Registers the create `key` of `kind`, accepted at `now`: it resolves
 * `subscriptionDelayMs` later to Failed with the message `failed`, or to Succeeded with
 * the resource `instanceId` already recorded (then at once when there is no delay).
 * Returns the create's answer in the configured `createAnswerShape`.
 */
export function acceptCreate(
  state: EmulatorState,
  kind: SubscriptionKind,
  key: string,
  now: number,
  outcome: { failed: string } | { instanceId: string },
): unknown {
  const resolveAt = now + state.behaviour.subscriptionDelayMs;
  if ("failed" in outcome) {
    state.addSubscription({
      key,
      kind,
      createdAt: now,
      resolveAt,
      outcome: "Failed",
      resolved: false,
      message: outcome.failed,
    });
    return createAnswer(state.behaviour.createAnswerShape, key);
  }
  const sub: SubscriptionRecord = {
    key,
    kind,
    createdAt: now,
    resolveAt,
    outcome: "Succeeded",
    resolved: false,
    instanceId: outcome.instanceId,
  };
  state.addSubscription(sub);
  if (state.behaviour.subscriptionDelayMs <= 0) state.resolve(sub, now);
  return createAnswer(state.behaviour.createAnswerShape, key, outcome.instanceId);
}

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
