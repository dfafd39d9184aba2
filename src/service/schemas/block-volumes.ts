/**
 * Block volumes. The spec lists the paths of create, attach, detach and delete and shows
 * no payloads ("Payload shapes of the block and file storage operations: not shown.");
 * the shapes below are this project's assumption (docs/service-assumptions.md §11b),
 * read tolerantly: the record's fields under a few likely names, states in any case.
 * The request bodies are declared beside the operations, in kinds/blockvolume.ts.
 */
import { z } from "zod";
import { idString, optionalInt, optionalString, optionalTimestamp } from "./primitives.js";

/**
 * The volume states the project assumes (the spec names none): `creating` until it can
 * be used, `available` (detached), `attaching`, `in-use` (attached), `detaching`,
 * `deleting`, `error`. Other values are kept as sent.
 */
export const VOLUME_STATES = [
  "creating",
  "available",
  "attaching",
  "in-use",
  "detaching",
  "deleting",
  "error",
] as const;

/** An assumed volume state. */
export type VolumeState = (typeof VOLUME_STATES)[number];

/** Spellings of the states read as each assumed one (compared in lower case, `_`/space as `-`). */
const STATE_WORDS: Record<string, VolumeState> = {
  creating: "creating",
  available: "available",
  detached: "available",
  attaching: "attaching",
  "in-use": "in-use",
  inuse: "in-use",
  attached: "in-use",
  detaching: "detaching",
  deleting: "deleting",
  error: "error",
  failed: "error",
};

/** The assumed state for a state word of the service, or the word as sent. */
export function volumeState(word: string): string {
  return (
    STATE_WORDS[
      word
        .trim()
        .toLowerCase()
        .replace(/[_\s]+/g, "-")
    ] ?? word
  );
}

function firstDefined(o: Record<string, unknown>, names: readonly string[]): unknown {
  for (const n of names) if (o[n] !== undefined && o[n] !== null) return o[n];
  return undefined;
}

/** The instance id of the first attachment in `attachments: [{instanceId|serverId}]`. */
function attachmentInstance(v: unknown): unknown {
  if (!Array.isArray(v) || v.length === 0) return undefined;
  const first = v[0] as Record<string, unknown> | null;
  return first && typeof first === "object"
    ? firstDefined(first, ["instanceId", "serverId"])
    : undefined;
}

/**
 * A block volume as the service returns it (the assumed canonical fields first, other
 * spellings read too): `sizeGB` (or `size`, `sizeGb`, `capacity`), `volumeType` (or
 * `type`), `status` (or `state`, read as {@link volumeState}), `instanceId` of the
 * instance it is attached to (or `attachedTo`, `serverId`, `attachments[0].instanceId`;
 * "" reads as none); times in RFC 3339.
 */
export const blockVolumeSchema = z.preprocess(
  (v) => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
    const o = v as Record<string, unknown>;
    const attached =
      firstDefined(o, ["instanceId", "attachedTo", "attachedInstanceId", "serverId"]) ??
      attachmentInstance(o.attachments);
    return {
      ...o,
      sizeGB: firstDefined(o, ["sizeGB", "sizeGb", "size", "capacity"]),
      volumeType: firstDefined(o, ["volumeType", "type"]),
      status: firstDefined(o, ["status", "state"]),
      instanceId: attached === "" ? undefined : attached,
      createdTime: firstDefined(o, ["createdTime", "createTime"]),
      updatedTime: firstDefined(o, ["updatedTime", "updateTime", "lastUpdateTime"]),
    };
  },
  z.object({
    id: idString,
    name: optionalString,
    description: optionalString,
    sizeGB: optionalInt,
    volumeType: optionalString,
    status: z.preprocess((s) => (typeof s === "string" ? volumeState(s) : s), optionalString),
    /** The instance the volume is attached to; absent when detached. */
    instanceId: optionalString,
    createdTime: optionalTimestamp,
    updatedTime: optionalTimestamp,
  }),
);

/** A block volume. */
export type BlockVolume = z.infer<typeof blockVolumeSchema>;

/**
 * The answer of a create: the new volume, or only its id (a bare id, or an object with
 * `id` or `volumeId`).
 */
export const createdVolumeSchema = z.preprocess(
  (v) => {
    if (typeof v === "string" || typeof v === "number") return { id: v };
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
    const o = v as Record<string, unknown>;
    return { ...o, id: o.id ?? o.volumeId };
  },
  z.looseObject({ id: idString }),
);
