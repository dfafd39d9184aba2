/**
 * Pure decisions of the generic managed reconciler: how long to wait for a pending
 * subscription, what to do on deletion, the Synced condition of a failure, and the
 * judgement of a settled object (one that needs only routine polls) from the object
 * alone: the queue lane of its key, whether its poll may be answered from the kind's
 * list (observe.ts), and how a reconcile of it calls the service (run.ts): routine
 * observation takes the routine budget, a follow-up does not.
 */
import { type Condition, type ConditionInput, getCondition } from "../../runtime/conditions.js";
import type { SettledCheck } from "../../runtime/controller.js";
import { errorMessage, errorReason, isExternalHold } from "../../runtime/errors.js";
import type { KubeObject } from "../../runtime/resource.js";
import type { CallContext } from "../../service/call-context.js";
import { failedSyncCondition } from "../health-conditions.js";
import type { ManagedObject } from "./call.js";
import { ANNOTATIONS } from "./create-protocol.js";

/** Default first poll of a pending subscription. */
export const DEFAULT_SUBSCRIPTION_POLL_MS = 1_000;

/** The first poll of a pending subscription: the loop's `subscriptionPollMs`, else the default. */
export function firstSubscriptionPollMs(options: { subscriptionPollMs?: number }): number {
  return options.subscriptionPollMs ?? DEFAULT_SUBSCRIPTION_POLL_MS;
}

/**
 * The requeue delay while a subscription is pending: half its age (so the delay
 * doubles as the wait goes on), at least `firstMs`, at most `maxMs`. An unknown age
 * (NaN) polls after `firstMs`.
 */
export function subscriptionPollDelay(ageMs: number, firstMs: number, maxMs: number): number {
  if (!Number.isFinite(ageMs) || ageMs < 0) return Math.min(firstMs, maxMs);
  return Math.min(Math.max(firstMs, Math.round(ageMs / 2)), Math.max(firstMs, maxMs));
}

/**
 * The requeue while something is under way that should end soon (a resource coming up,
 * a change waiting, a deletion waiting): five first subscription polls, at most the
 * poll interval.
 */
export function soonPollMs(options: { pollIntervalMs: number; subscriptionPollMs?: number }) {
  return Math.min(options.pollIntervalMs, 5 * firstSubscriptionPollMs(options));
}

/** What is known about the remote resource when the object is being deleted. */
export interface DeletionInput {
  policy: "Orphan" | "Delete";
  externalId: string | undefined;
  /** A create was sent and has not resolved to an id yet (key or pending marker). */
  createInFlight: boolean;
  /** The kind has a delete operation (it may still answer NotConfigured). */
  canDelete: boolean;
}

/** The deletion step. */
export type DeletionStep =
  /** Nothing remote to act on: remove the finalizer. */
  | { step: "Release" }
  /** Leave the remote resource; `warn` explains a Delete policy that cannot be honoured. */
  | { step: "Orphan"; warn?: string }
  /**
   * Run the kind's steps before deletion, delete the remote resource, and remove the
   * finalizer once it is gone.
   */
  | { step: "Delete"; externalId: string }
  /** A create is in flight under a Delete policy: learn its id before deleting. */
  | { step: "WaitForCreate" };

/** Message of a Delete policy the kind cannot honour. */
export const NO_DELETE_OPERATION =
  "deletionPolicy is Delete but no delete operation is configured for this kind; the remote resource is left in the service (orphaned)";

/**
 * Decides the deletion step: Orphan leaves whatever exists; Delete deletes a known
 * resource where possible, otherwise orphans it with a warning, and first waits for an
 * in-flight create so that a resource being created is not leaked.
 */
export function decideDeletion(input: DeletionInput): DeletionStep {
  const { policy, externalId } = input;
  if (policy === "Orphan") {
    return externalId || input.createInFlight ? { step: "Orphan" } : { step: "Release" };
  }
  if (!input.canDelete) {
    return externalId || input.createInFlight
      ? { step: "Orphan", warn: NO_DELETE_OPERATION }
      : { step: "Release" };
  }
  if (externalId) return { step: "Delete", externalId };
  if (input.createInFlight) return { step: "WaitForCreate" };
  return { step: "Release" };
}

/**
 * The Synced condition of a failed reconcile: the error's own reason when it is one of
 * src/crds/reasons.ts (else ReconcileTerminal / ReconcileError by class) and its
 * message.
 */
export function syncedConditionOf(err: unknown): ConditionInput {
  return failedSyncCondition(err);
}

/**
 * The Ready condition while a reconcile fails for a reason outside the object (an
 * external hold: the API key refused, a missing operation, an answer of an unknown
 * shape), or undefined to leave Ready as it is (any other failure). What was true
 * cannot be vouched for any more: Ready=True becomes Unknown; an object without Ready
 * (new) or not Ready gets Ready=False; both with the error's reason and message.
 */
export function heldReadyCondition(
  err: unknown,
  previous: Condition | undefined,
): ConditionInput | undefined {
  if (!isExternalHold(err)) return undefined;
  return {
    type: "Ready",
    status: previous?.status === "True" || previous?.status === "Unknown" ? "Unknown" : "False",
    reason: errorReason(err, "ReconcileTerminal"),
    message: errorMessage(err),
  };
}

/**
 * Whether a managed object needs only routine polls, from the cache alone: bound to
 * its remote resource (an id, no create pending), not being deleted, and the last
 * reconcile of this generation found it neither coming up (`Creating`) nor waiting for
 * a change (`Updating`), without an error. A finished or stopped task (Ready=True
 * `TaskSucceeded`, Ready=False `TaskStopped`) is settled; an object being created,
 * changed or deleted is not.
 */
export const managedSettled: SettledCheck = (found) => {
  const obj = found as ManagedObject;
  const meta = obj.metadata;
  const annotations = meta?.annotations ?? {};
  if (meta?.deletionTimestamp || annotations[ANNOTATIONS.createPending] !== undefined) {
    return false;
  }
  if (annotations[ANNOTATIONS.externalId] === undefined) return false;
  const ready = getCondition(obj.status?.conditions, "Ready");
  const synced = getCondition(obj.status?.conditions, "Synced");
  return (
    ready?.observedGeneration === meta?.generation &&
    ready?.reason !== "Creating" &&
    synced?.observedGeneration === meta?.generation &&
    synced?.status === "True" &&
    synced.reason !== "Updating"
  );
};

/**
 * How a reconcile of `obj` calls the service: as routine observation when the object
 * is settled (see {@link managedSettled}) and nothing on it is under way; as a
 * follow-up (behind other work, outside the routine budget) when it is settled but a
 * condition still says work is under way (`Reconciling=True`, e.g. a TrainingJob whose
 * pods are read after its first look); as work otherwise, and always when the user
 * asked for the reconcile (`requested`, policies.ts). `signal` aborts its calls.
 */
export function callsOf(obj: KubeObject, requested: boolean, signal?: AbortSignal): CallContext {
  if (requested || !managedSettled(obj)) return { routine: false, signal };
  const { conditions } = (obj as ManagedObject).status ?? {};
  const underWay = getCondition(conditions, "Reconciling")?.status === "True";
  return underWay ? { routine: false, followUp: true, signal } : { routine: true, signal };
}
