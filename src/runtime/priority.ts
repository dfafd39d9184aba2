/**
 * The priority of the reconcile running now, carried through its async calls, so that
 * clients below the reconcile (the service client's rate limit) can let routine polls
 * wait behind work without every call passing it along.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { QueuePriority } from "./workqueue.js";

const current = new AsyncLocalStorage<QueuePriority>();

/** Runs `fn` as work of the given priority (the lane its key came from). */
export function withReconcilePriority<T>(priority: QueuePriority, fn: () => T): T {
  return current.run(priority, fn);
}

/**
 * The priority of the reconcile this call belongs to: `low` for a routine poll of a
 * settled object (or a resync), `normal` for everything else, also outside a reconcile.
 */
export function currentReconcilePriority(): QueuePriority {
  return current.getStore() ?? "normal";
}

const flows = new AsyncLocalStorage<string>();

/**
 * Runs `fn` as work of `flow` (its key's flow, workqueue.ts): the Kubernetes client
 * shares its write budget between flows in turn.
 */
export function withReconcileFlow<T>(flow: string | undefined, fn: () => T): T {
  return flow === undefined ? fn() : flows.run(flow, fn);
}

/** The flow of the reconcile this call belongs to; `""` outside a reconcile. */
export function currentReconcileFlow(): string {
  return flows.getStore() ?? "";
}
