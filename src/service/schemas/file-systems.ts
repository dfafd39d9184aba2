/**
 * File systems and their mounts. The spec lists `POST /v1/file-systems` and `POST
 * /v1/file-systems/{id}/mounts` and shows no payloads ("Payload shapes of the block and
 * file storage operations: not shown."), so the shapes here are this project's
 * assumptions (docs/service-assumptions.md, "File systems and mounts"): answers are read
 * tolerantly (other spellings of each field, `null` as absent, unknown fields ignored),
 * and only `id` is required; the request bodies, validated as assumed, are declared
 * beside the operations, in kinds/filesystem.ts.
 */
import { z } from "zod";
import {
  idString,
  optionalArray,
  optionalInt,
  optionalString,
  optionalTimestamp,
} from "./primitives.js";

/** Copies the first present alias of each field to its canonical name. */
function withAliases(aliases: Record<string, readonly string[]>) {
  return (v: unknown): unknown => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
    const o = { ...(v as Record<string, unknown>) };
    for (const [name, others] of Object.entries(aliases)) {
      if (o[name] !== undefined && o[name] !== null) continue;
      const found = others.find((a) => o[a] !== undefined && o[a] !== null);
      if (found !== undefined) o[name] = o[found];
    }
    return o;
  };
}

/** A mount of a file system as the service shows it (inside the file system's record). */
export const fileSystemMountSchema = z.preprocess(
  withAliases({
    id: ["mountId"],
    instanceId: ["targetId", "cciInstanceId", "serverId"],
    status: ["state", "mountStatus"],
    address: ["mountAddress", "mountTarget", "exportPath", "endpoint"],
  }),
  z.object({
    id: idString,
    /** The CCI instance the file system is mounted on. */
    instanceId: optionalString,
    mountPath: optionalString,
    /** The mount's state word, verbatim (the emulator: creating, mounted, deleting). */
    status: optionalString,
    /** Where the instance reaches the file system (e.g. `10.30.0.2:/fs-000001`). */
    address: optionalString,
  }),
);

/** A mount of a file system. */
export type FileSystemMount = z.infer<typeof fileSystemMountSchema>;

/** A file system as its detail (and its list) shows it; times in RFC 3339. */
export const fileSystemSchema = z.preprocess(
  withAliases({
    id: ["fileSystemId", "fsId"],
    sizeGB: ["size", "capacityGB", "capacity"],
    type: ["fileSystemType", "storageType"],
    status: ["state"],
    createdTime: ["createTime", "createdAt"],
    mounts: ["mountTargets", "mountList"],
  }),
  z.object({
    id: idString,
    name: optionalString,
    /** Carries the client token and owner marks of a create (create.ts). */
    description: optionalString,
    sizeGB: optionalInt,
    type: optionalString,
    protocol: optionalString,
    /** The file system's state word, verbatim (the emulator: creating, available, deleting). */
    status: optionalString,
    aidcId: optionalInt,
    createdTime: optionalTimestamp,
    /** Absent when the answer does not say (a list record may leave them out). */
    mounts: optionalArray(fileSystemMountSchema),
  }),
);

/** A file system. */
export type FileSystem = z.infer<typeof fileSystemSchema>;

/**
 * The answer of a create (of a file system or a mount): the new object, of which only
 * its id is read (also as `fileSystemId` / `mountId`), and may be absent: the
 * controller then finds the object by its client token or its target. A non-object
 * answer (the usual empty `{}` included) reads as no id.
 */
export const createdObjectSchema = z.preprocess(
  (v) =>
    withAliases({ id: ["fileSystemId", "fsId", "mountId"] })(
      v !== null && typeof v === "object" && !Array.isArray(v) ? v : {},
    ),
  z.object({ id: idString.optional() }),
);

/** The id a create answered, if any. */
export type CreatedObject = z.infer<typeof createdObjectSchema>;

/** What a state word of a file system or mount says. */
export type StorageStateClass = "Ready" | "Creating" | "Deleting" | "Failed" | "Unknown";

const STATE_WORDS: Record<Exclude<StorageStateClass, "Unknown">, readonly string[]> = {
  Ready: ["available", "active", "running", "ready", "normal", "mounted", "inuse", "ok"],
  Creating: ["creating", "pending", "provisioning", "mounting", "initializing", "building"],
  Deleting: ["deleting", "releasing", "removing", "unmounting", "terminating", "deleted"],
  Failed: ["error", "failed", "failure", "mountfailed", "createfailed"],
};

/**
 * The class of a state word, ignoring case, `_`, `-` and spaces (the spec shows no
 * states: see docs/service-assumptions.md); "Unknown" for absent or other words.
 */
export function storageStateClass(word: string | undefined): StorageStateClass {
  const w = (word ?? "").toLowerCase().replace(/[\s_-]/g, "");
  for (const [cls, words] of Object.entries(STATE_WORDS)) {
    if (words.includes(w)) return cls as StorageStateClass;
  }
  return "Unknown";
}
