/**
 * The status write of a managed object that changes only its conditions (the kstatus
 * conditions follow), used where a reconcile has no new status fields to record.
 */

import { REASONS } from "../../crds/index.js";
import { setCondition, withKstatusConditions } from "../../runtime/conditions.js";
import type { ReconcileContext } from "../../runtime/controller.js";
import { patchStatus } from "../../runtime/writes.js";
import type { ManagedObject } from "./call.js";
import { toKube } from "./call.js";
import type { ManagedKind } from "./external-client.js";

/** Sets conditions on `obj`'s current status and patches it when it changed. */
export async function writeConditions<T extends ManagedObject>(
  ctx: ReconcileContext,
  kind: ManagedKind<T, unknown>,
  obj: T,
  conds: Parameters<typeof setCondition>[1][],
): Promise<void> {
  const generation = obj.metadata?.generation;
  let conditions = obj.status?.conditions;
  for (const c of conds) conditions = setCondition(conditions, c, generation, ctx.clock.now());
  conditions = withKstatusConditions(conditions, REASONS, generation, ctx.clock.now());
  await patchStatus(ctx.kube, kind.resource, toKube(obj), { ...(obj.status ?? {}), conditions });
}
