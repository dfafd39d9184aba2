/**
 * The CciInstance as a Kubernetes object (the crd's type plus the runtime's object
 * shape), shared by the reconciler and the image saver, and the parts of its status
 * every status write of the reconciler computes the same way.
 */
import type { CciInstance } from "../../crds/cciinstance.js";
import { REASONS } from "../../crds/index.js";
import {
  type Condition,
  type ConditionInput,
  type KubeObject,
  setCondition,
  withKstatusConditions,
} from "../../runtime/index.js";
import { reconcileRequest } from "../managed/decisions.js";

/** A CciInstance as the cache holds it. */
export type CciObject = CciInstance & KubeObject;

/** `obj`'s conditions (or `from`) with `inputs` set in order, then kstatus's. */
export function withConditions(
  obj: CciObject,
  inputs: ConditionInput[],
  now: Date,
  from = obj.status?.conditions,
): Condition[] {
  const gen = obj.metadata?.generation;
  let conditions = from;
  for (const c of inputs) conditions = setCondition(conditions, c, gen, now);
  return withKstatusConditions(conditions, REASONS, gen, now);
}

/**
 * status.lastHandledReconcileAt: the `aidc.io/reconcile-requested-at` this reconcile
 * handles (the managed loop's `reconcileRequest`), else the one handled before.
 */
export function lastHandled(obj: CciObject): { lastHandledReconcileAt?: string } {
  const at = reconcileRequest(obj) ?? obj.status?.lastHandledReconcileAt;
  return at === undefined ? {} : { lastHandledReconcileAt: at };
}
