/**
 * The CciInstance as a Kubernetes object (the crd's type plus the runtime's object
 * shape), shared by the reconciler and the image saver, and the conditions every
 * status write of the reconciler computes the same way.
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
