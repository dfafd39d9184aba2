/**
 * What one step of a managed reconcile (create, observe, bind, delete) decided; the
 * reconciler turns it into conditions, status and a requeue.
 */
import type { ManagedFacts, ReadyState } from "./call.js";

/** What one step decided: conditions, status facts, requeue. */
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
  /** The requeue is the routine poll of a settled object (low priority in the queue). */
  routine?: boolean;
}

/** The Synced=True condition of a successful reconcile. */
export const SYNCED_OK: ReadyState = { status: "True", reason: "ReconcileSuccess", message: "" };

/** Ready=False Creating: the remote resource is on its way, with what it waits for. */
export function creatingReady(message: string): ReadyState {
  return { status: "False", reason: "Creating", message };
}
