/**
 * What a referenced object's own conditions say when it will not get where a waiting
 * object needs it by itself: the end of the waiting object's "not Ready yet" message,
 * so that its reader learns the wait needs a person, and where to look.
 */
import { type Condition, getCondition } from "../runtime/object-writes.js";

/**
 * `""` while `obj` is on its way (or absent); else `: it is stalled (<reason>: <message>)`
 * from its kstatus `Stalled` condition (a terminal reason stands: a person must act).
 */
export function stalledNote(obj: { status?: { conditions?: Condition[] } } | undefined): string {
  const stalled = getCondition(obj?.status?.conditions, "Stalled");
  if (stalled?.status !== "True") return "";
  return `: it is stalled (${stalled.reason}: ${stalled.message})`;
}
