/**
 * An adopted remote resource (the spec's id, or the external-id annotation on a resource
 * the operator did not create for the object) whose fields that cannot change
 * contradict the spec (a NAS made with another product, a volume of another size):
 * Synced=False `FixedFieldsDiffer`, on every poll and under any policies, since neither
 * an update nor a spec change can bring them together; nothing of the resource is
 * changed meanwhile (the spec likely names another one than meant). The remote's
 * values show in the message (and status); the remedy is a new object that says them.
 */
import type { ReadyState } from "./call.js";
import type { FixedFieldDiff } from "./external-client.js";

/**
 * The contradictions among `[field, spec value, remote value]` triples: both values
 * known (a field the spec leaves out, or the record does not show, contradicts nothing)
 * and different, words in any case being the same (`NFS`, `nfs`). What a kind's
 * `fixedFields` answers.
 */
export function contradictions(fields: readonly [string, unknown, unknown][]): FixedFieldDiff[] {
  const same = (a: unknown, b: unknown) =>
    typeof a === "string" && typeof b === "string" ? a.toLowerCase() === b.toLowerCase() : a === b;
  return fields
    .filter(([, spec, remote]) => spec !== undefined && remote !== undefined && !same(spec, remote))
    .map(([field, spec, remote]) => ({ field, spec, remote }));
}

/**
 * `synced`, or FixedFieldsDiffer over it when `diffs` has any (keeping what it said);
 * `held`: the spec asks changes of the resource, which wait.
 */
export function withFixedFields(
  synced: ReadyState,
  diffs: readonly FixedFieldDiff[],
  held = false,
): ReadyState {
  if (diffs.length === 0) return synced;
  const named = diffs
    .map(
      (d) => `${d.field} ${JSON.stringify(d.spec)} (the resource has ${JSON.stringify(d.remote)})`,
    )
    .join(", ");
  const also = synced.status === "False" ? `; also, ${synced.message}` : "";
  const waits = held && synced.status !== "False" ? "; nothing of it is changed meanwhile" : "";
  return {
    status: "False",
    reason: "FixedFieldsDiffer",
    message: `the spec says ${named}, which the service cannot change: delete this object (deletionPolicy Orphan keeps the resource) and create one with the resource's values${waits}${also}`,
  };
}
