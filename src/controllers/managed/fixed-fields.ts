/**
 * A bound remote resource whose fields that cannot change contradict the spec (a
 * resource adopted by id that was made with another product, name or compute center):
 * Synced=False `FixedFieldsDiffer`, on every poll and under any policies, since neither
 * an update nor a spec change can bring them together. The remote's values show in
 * the message (and status); the remedy is a new object that says them.
 */
import type { ReadyState } from "./call.js";
import type { FixedFieldDiff } from "./external-client.js";

/** `synced`, or FixedFieldsDiffer over it when `diffs` has any (keeping what it said). */
export function withFixedFields(synced: ReadyState, diffs: readonly FixedFieldDiff[]): ReadyState {
  if (diffs.length === 0) return synced;
  const named = diffs
    .map(
      (d) => `${d.field} ${JSON.stringify(d.spec)} (the resource has ${JSON.stringify(d.remote)})`,
    )
    .join(", ");
  const also = synced.status === "False" ? `; also, ${synced.message}` : "";
  return {
    status: "False",
    reason: "FixedFieldsDiffer",
    message: `the spec says ${named}, which the service cannot change: delete this object (deletionPolicy Orphan keeps the resource) and create one with the resource's values${also}`,
  };
}
