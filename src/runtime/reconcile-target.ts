/**
 * Which object the reconcile running now is about, carried through its async calls
 * (like its priority and its signal), so that a client below the reconcile can act for
 * that object without every call passing it along: the service connections route each
 * service call to the account of the object being reconciled.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { ObjectKey, ResourceDescriptor } from "./resource.js";

/** The kind and key of the object a reconcile is about. */
export interface ReconcileTarget {
  readonly resource: ResourceDescriptor;
  readonly key: ObjectKey;
}

const current = new AsyncLocalStorage<ReconcileTarget>();

/** Runs `fn` as the reconcile of `target`. */
export function withReconcileTarget<T>(target: ReconcileTarget, fn: () => T): T {
  return current.run(target, fn);
}

/** The object the current reconcile is about; undefined outside a reconcile. */
export function currentReconcileTarget(): ReconcileTarget | undefined {
  return current.getStore();
}
