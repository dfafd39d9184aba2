/**
 * What one step of a live managed object decides: an {@link Outcome} (conditions, status
 * facts, requeue) that ends the reconcile, or the {@link Next} step the dispatcher
 * (reconciler.ts) runs. Steps never call each other; they answer one of these, or
 * fail with the cause wrapped as `what: cause` ({@link step}), keeping the cause's
 * reason and whether it is terminal.
 */
import {
  errorMessage,
  errorReason,
  isTerminal,
  RetryableError,
  requeueAfterOf,
  TerminalError,
} from "../../runtime/errors.js";
import type { QueuePriority } from "../../runtime/workqueue.js";
import type { ManagedFacts, ReadyState } from "./call.js";
import type { CreatePending } from "./create-protocol.js";
import type { BindingRefusal } from "./tenancy.js";

/** What a reconcile of a live object ends with: conditions, status facts, requeue. */
export interface Outcome<R> {
  facts: ManagedFacts;
  /** The remote record observed in this reconcile, if any. */
  remote?: R;
  ready: ReadyState;
  synced: ReadyState;
  /** Keep the previous kind status fields (only the conditions change). */
  keepStatus?: boolean;
  /** Undefined: wait for the next change. */
  requeueAfterMs?: number;
  /**
   * The queue lane of the requeue (runtime/fair-lanes.ts): `low` for the routine poll of
   * a settled object, `deferred` for the follow-up look of one still settling.
   */
  priority?: QueuePriority;
}

/** The create's subscription as the status shows it. */
export type Subscription = ManagedFacts["subscription"];

/** The answer of a step: an outcome, or the step the dispatcher runs next. */
export type Next<R> =
  /** The reconcile ends with this outcome. */
  | { step: "Done"; outcome: Outcome<R> }
  /**
   * Observe (and update) `externalId`; `binding` is the write that binds it, still under
   * way (the read need not wait for it).
   */
  | { step: "Observe"; externalId: string; subscription?: Subscription; binding?: Promise<unknown> }
  /** Poll the create's subscription `key`; `justOrdered`: sent in this reconcile, key unwritten. */
  | { step: "Poll"; key: string; pending: CreatePending | undefined; justOrdered?: boolean }
  /** Look the resource of an unfinished create up by its client token. */
  | { step: "Lookup"; pending: CreatePending }
  /** Place a new order (a marker whose create was never sent was dropped). */
  | { step: "Create" }
  /** The create failed remotely for this generation: wait for a spec change. */
  | { step: "CreateFailed" }
  /** The binding is refused (tenancy.ts): nothing is changed. */
  | { step: "Refused"; refusal: BindingRefusal }
  /** The create's outcome cannot be known (`why`); the user decides. */
  | { step: "Unknown"; why: string };

/** The Synced=True condition of a successful reconcile. */
export const SYNCED_OK: ReadyState = { status: "True", reason: "ReconcileSuccess", message: "" };

/** Ready=False Creating: the remote resource is on its way, with what it waits for. */
export function creatingReady(message: string): ReadyState {
  return { status: "False", reason: "Creating", message };
}

/** The step that ends the reconcile with `outcome`. */
export function done<R>(outcome: Outcome<R>): Next<R> {
  return { step: "Done", outcome };
}

/** Messages that wrap the cause of a failed step (constants around the cause). */
export const ERR = {
  operations: "will not order the remote resource",
  preflight: "cannot check the spec against the service before ordering",
  create: "cannot create the remote resource",
  poll: "cannot read the outcome of the subscription",
  lookup: "cannot look up the remote resource of an unfinished create",
  observe: "cannot observe the remote resource",
  update: "cannot update the remote resource",
  beforeDelete: "cannot prepare the remote resource for deletion",
  delete: "cannot delete the remote resource",
} as const;

/**
 * Re-throws `err` as a RetryableError or TerminalError (by `isTerminal`) whose message
 * is `what: cause` and whose reason is the cause's own PascalCase reason, if any.
 */
export function wrapError(what: string, err: unknown): Error {
  const terminal = isTerminal(err);
  const reason = errorReason(err, terminal ? "ReconcileTerminal" : "ReconcileError");
  const message = `${what}: ${errorMessage(err)}`;
  return terminal
    ? new TerminalError(reason, message, { cause: err })
    : new RetryableError(reason, message, {
        cause: err,
        waiting: err instanceof RetryableError && err.waiting,
        ...(requeueAfterOf(err) !== undefined ? { requeueAfterMs: requeueAfterOf(err) } : {}),
      });
}

/** Runs one remote step, wrapping its failure as `what: cause` (see {@link wrapError}). */
export async function step<V>(what: string, fn: () => Promise<V>): Promise<V> {
  try {
    return await fn();
  } catch (err) {
    throw wrapError(what, err);
  }
}
