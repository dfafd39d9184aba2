/**
 * The default judgement of whether a controller's object needs only routine looks,
 * which decides the queue lane of keys enqueued from the cache (start, resync). A
 * controller may give its own (`settled` in its definition).
 */
import { type Condition, getCondition } from "./object-writes.js";
import type { KubeObject } from "./resource.js";

/**
 * Whether an object looks settled from outside a reconcile (the initial list, the
 * resync): Ready=True for its current generation, not Synced=False, not being
 * deleted. Such a key waits in the low lane; any other (a create or a deletion under
 * way, a spec not acted on yet, an error) goes in the normal one, so that after a
 * restart the work that was under way resumes first.
 */
export function looksSettled(obj: KubeObject): boolean {
  if (obj.metadata?.deletionTimestamp) return false;
  const conditions = (obj as { status?: { conditions?: Condition[] } }).status?.conditions;
  const ready = getCondition(conditions, "Ready");
  return (
    ready?.status === "True" &&
    ready.observedGeneration === obj.metadata?.generation &&
    getCondition(conditions, "Synced")?.status !== "False"
  );
}
