/**
 * Status writes the API server accepted but answered changed (a mutating admission
 * webhook or policy on the status subresource): which fields the answer does not show,
 * and, per object, the write that was not kept, so that patchStatus (object-writes.ts)
 * does not send the same status again at the same generation over what its answer showed.
 * Off the path of a status that is kept: patchStatus calls here only for an object whose
 * write was not kept.
 */

import { WriteNotKeptError } from "./errors.js";
import { noteNewest } from "./newest-first.js";
import { type Json, jsonEqual, type KubeObject } from "./resource.js";

/** A status write not kept: the generation, the status sent, what its answer showed, the fields. */
export interface UnkeptStatusWrite {
  generation: number | undefined;
  desired: string;
  shown: Json;
  fields: string;
}

/** The status writes not kept, by object uid; at most {@link MAX_OBJECTS}, the oldest go first. */
export const UNKEPT_STATUS_WRITES = new Map<string, UnkeptStatusWrite>();

const MAX_OBJECTS = 10_000;

/**
 * Whether writing `desired` over `current` repeats the write of `obj` not kept before:
 * at the same generation, over what its answer showed.
 */
export function sameUnkeptWrite(obj: KubeObject, current: Json, desired: Json): boolean {
  const before = UNKEPT_STATUS_WRITES.get(obj.metadata?.uid ?? "");
  return (
    before !== undefined &&
    before.generation === obj.metadata?.generation &&
    jsonEqual(current, before.shown) &&
    before.desired === JSON.stringify(desired)
  );
}

/** The status fields (conditions by type) whose value `shown` does not hold as `desired` has it. */
export function unkeptStatusFields(desired: Json | undefined, shown: Json | undefined): string[] {
  const want = asRecord(desired);
  const have = asRecord(shown);
  const out: string[] = [];
  for (const key of new Set([...Object.keys(want), ...Object.keys(have)])) {
    if (jsonEqual(want[key], have[key])) continue;
    if (key !== "conditions") {
      out.push(`status.${key}`);
      continue;
    }
    const byType = (v: Json | undefined) =>
      new Map((Array.isArray(v) ? v : []).map((c) => [asRecord(c).type, c]));
    const [a, b] = [byType(want[key]), byType(have[key])];
    for (const type of new Set([...a.keys(), ...b.keys()])) {
      if (!jsonEqual(a.get(type), b.get(type))) out.push(`status.conditions[${String(type)}]`);
    }
  }
  return out;
}

/**
 * Records that the status write of `obj` was answered without `desired` as written
 * (`shown`), and returns the words of the Warning that says so: undefined when the
 * object's previous write at this generation was not kept in the same fields (said).
 */
export function statusNotKept(
  obj: KubeObject,
  desired: Json,
  shown: Json | undefined,
): string | undefined {
  const unkept = unkeptStatusFields(desired, shown);
  const uid = obj.metadata?.uid ?? "";
  const generation = obj.metadata?.generation;
  const fields = unkept.join(", ");
  const before = UNKEPT_STATUS_WRITES.get(uid);
  noteNewest(
    UNKEPT_STATUS_WRITES,
    uid,
    { generation, desired: JSON.stringify(desired), shown: shown ?? {}, fields },
    MAX_OBJECTS,
  );
  if (before?.generation === generation && before?.fields === fields) return undefined;
  const { message } = new WriteNotKeptError("status update", unkept);
  return `${message}. The same status is not written again until it or the object's generation changes`;
}

function asRecord(v: Json | undefined): Record<string, Json> {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? v : {};
}
