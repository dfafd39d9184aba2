/**
 * The flow of the reconcile running now, carried through its async calls, so that the
 * Kubernetes client shares its write budget between flows without every write passing
 * it along. (The service client gets its reconcile's context explicitly: a view per
 * reconcile, src/service/call-context.ts.)
 */
import { AsyncLocalStorage } from "node:async_hooks";

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
