import { z } from "zod";
import { kindColumns, phaseColumn, serviceIdColumn, statusColumn } from "./columns.js";
import {
  type CrdDefinition,
  type CustomResource,
  described,
  type FieldRule,
  GROUP,
  VERSION,
  withRules,
} from "./definition.js";
import {
  adoptedId,
  computeCenterId,
  exportTo,
  INTEGER_LIMITS,
  managedSpecShape,
  serviceDescription,
  serviceName,
} from "./fields.js";
import { fileSystemMountStatusSchema, mountsSchema } from "./filesystem-mounts.js";
import { adoptedIdRule, CONNECTION_REF_RULE, mutabilityRules, sameRuleFor } from "./mutability.js";
import { ownReason, ownReasons, REFERENCE, readEveryPoll, referenceWait } from "./reasons/own.js";

export {
  type FileSystemMountSpec,
  type FileSystemMountStatus,
  fileSystemMountSchema,
  fileSystemMountStatusSchema,
  fileSystemMountTargetSchema,
  MountState,
} from "./filesystem-mounts.js";

import {
  exportStatusShape,
  externalIdStatus,
  kindStatus,
  managedStatusShape,
  optionalString,
  serviceCreatedTime,
} from "./status-fields.js";

/** The FileSystem spec fields that may not change freely (see mutability.ts). */
export const FILE_SYSTEM_MUTABILITY: readonly FieldRule[] = [
  ...sameRuleFor(["name", "description", "sizeGB", "type", "protocol", "aidcId"], {
    mutability: "immutable",
    owner: "service",
    why: "the service has no operation that changes a file system (its assumed operations are create, mount and delete); create a new FileSystem instead",
  }),
  adoptedIdRule(
    "fileSystemId",
    "it binds the object to its file system (it may be set once, e.g. to resolve CreateOutcomeUnknown); to use another one, or when it no longer exists, delete this FileSystem and create a new one",
  ),
  CONNECTION_REF_RULE,
];

/** The reasons only FileSystem writes (reasons.ts has the shared ones). */
export const FILE_SYSTEM_REASONS = ownReasons({
  MountsPending: ownReason(
    "UnderWay",
    ["Ready"],
    "The file system is available and a mount of spec.mounts is being made or removed, or without Update in spec.managementPolicies is not made; status.mounts says which.",
  ),
  FileSystemUnavailable: ownReason(
    "UnderWay",
    ["Ready"],
    "The file system exists but the service shows it in a state that is not usable (being deleted, or a state word the operator does not know; status.remoteState has it).",
  ),
  FileSystemFailed: readEveryPoll(
    ownReason(
      "Terminal",
      ["Ready"],
      "The service shows the file system (or a mount of it) failed.",
      "Check it in the service; delete the object (or the mount entry) and create it anew.",
    ),
  ),
  MountTargetNotFound: referenceWait(
    "A CciInstance in mounts[].target.cciInstanceRef does not exist (yet); nothing is created or changed until it does.",
  ),
  MountTargetNotBound: referenceWait(
    "A CciInstance in mounts[].target.cciInstanceRef has no instance id yet; nothing is created or changed until it has.",
  ),
  MountTargetsCollide: ownReason(
    "Terminal",
    REFERENCE,
    "Two entries of spec.mounts name the same instance (a cciInstanceRef resolves to another entry's instanceId); a file system is mounted once per instance.",
    "Remove one of them.",
  ),
  MountRemovalUnavailable: ownReason(
    "Terminal",
    ["Synced"],
    "A mount removed from spec.mounts (or one to remove before a Delete) cannot be removed: the service has no remove operation (deleteFileSystemMount answers a bare 404, or is disabled). The mount stays, shown as RemovalNotPossible.",
    "Configure service.endpoints.deleteFileSystemMount, remove the mount in the service, put the entry back, or (for a Delete) set deletionPolicy Orphan.",
  ),
  OtherMountsBlockDelete: ownReason(
    "Terminal",
    ["Synced"],
    "deletionPolicy is Delete, but the file system has mounts this object did not make (status.otherMounts); the service deletes no file system with mounts and the operator removes no mount it did not make.",
    "Remove them in the service, or set deletionPolicy Orphan.",
  ),
});

/** Desired state of a FileSystem: one shared file system of the service and its mounts. */
export const FileSystemSpec = withRules(
  z
    .object({
      name: serviceName("file system", { immutable: true }),
      description: serviceDescription(
        "Description sent when the file system is created. Immutable: the service has no update.",
      ),
      sizeGB: described(
        z.number().int().min(1).max(INTEGER_LIMITS.capacityGB),
        `Size in GB, 1 to ${INTEGER_LIMITS.capacityGB} (1 PiB). Immutable: the service has no resize.`,
      ),
      type: described(
        z.string().min(1).max(64),
        "Type of the file system as the service names it (e.g. standard, performance); the service's default when omitted. Immutable.",
      ).optional(),
      protocol: described(
        z.enum(["NFS", "SMB"]),
        "Protocol the instances mount it with: NFS or SMB; the service's default when omitted. Immutable.",
      ).optional(),
      aidcId: computeCenterId(
        "Compute center of the file system",
        "; the service's default when omitted. Immutable.",
      ),
      fileSystemId: adoptedId("file system"),
      mounts: mountsSchema.optional(),
      exportTo: exportTo(
        "FILE_SYSTEM_ID, PROTOCOL and, per mount of the spec with an address, MOUNT_<name>_ADDRESS (its export path, host:/export)",
      ).optional(),
      ...managedSpecShape,
    })
    .meta({
      description:
        "Desired file system. mounts, exportTo, deletionPolicy and managementPolicies may change; name, description, sizeGB, type, protocol, aidcId and connectionRef are fixed at creation; fileSystemId may only be set once.",
    }),
  ...mutabilityRules(FILE_SYSTEM_MUTABILITY),
);
/** Desired state of a FileSystem, with the CRD's defaults applied. */
export type FileSystemSpec = z.infer<typeof FileSystemSpec>;

/** Phase of a FileSystem, the PHASE column. */
export const FileSystemPhase = z.enum([
  "Pending",
  "Creating",
  "Mounting",
  "Ready",
  "Deleting",
  "Failed",
  "Unknown",
]);
/** Phase of a FileSystem. */
export type FileSystemPhase = z.infer<typeof FileSystemPhase>;

/** Observed state of a FileSystem. */
export const FileSystemStatus = kindStatus("the file system", {
  ...managedStatusShape,
  phase: described(
    FileSystemPhase,
    "Pending (not created yet), Creating, Mounting (available, mounts under way or, without Update in spec.managementPolicies, not made), Ready (available and every mount of the spec mounted), Deleting, Failed, or Unknown (a state the operator does not know).",
  ).optional(),
  fileSystemId: externalIdStatus("file system"),
  remoteState: optionalString("The service's state word for the file system, verbatim."),
  name: optionalString("Name of the file system in the service."),
  sizeGB: described(z.number(), "Size in GB.").optional(),
  type: optionalString("Type of the file system."),
  protocol: optionalString("Protocol of the file system."),
  createdTime: serviceCreatedTime("file system"),
  aidcId: described(z.number().int(), "Compute center of the file system.").optional(),
  description: optionalString(
    "Description of the file system in the service (without the operator's token and owner marks).",
  ),
  mounts: z
    .array(fileSystemMountStatusSchema)
    .optional()
    .meta({ description: "The mounts: those of the spec, and those being removed." }),
  mountsReady: optionalString(
    "Mounted mounts of the spec over all of them, e.g. 1/2 (the MOUNTS column).",
  ),
  otherMounts: z
    .array(
      z
        .object({
          mountId: described(z.string(), "Id of the mount in the service."),
          instanceId: optionalString("The instance it mounts the file system on."),
        })
        .meta({ description: "A mount this object did not make." }),
    )
    .optional()
    .meta({
      description:
        "Mounts of the file system this object did not make (e.g. made in the console), the first 32: shown, never removed.",
    }),
  ...exportStatusShape,
});
/** Observed state of a FileSystem. */
export type FileSystemStatus = z.infer<typeof FileSystemStatus>;

/** A whole FileSystem object. */
export type FileSystem = CustomResource<FileSystemSpec, FileSystemStatus>;

/** The FileSystem kind (`fs`). */
export const fileSystemCrd: CrdDefinition<typeof FileSystemSpec, typeof FileSystemStatus> = {
  group: GROUP,
  version: VERSION,
  kind: "FileSystem",
  health: {
    field: "phase",
    states: { Failed: { health: "Degraded", message: "The file system failed" } },
  },
  remote: "managed",
  mutability: FILE_SYSTEM_MUTABILITY,
  reasons: FILE_SYSTEM_REASONS,
  sharedReasons: ["Available", "Resolved"],
  namespaced: true,
  plural: "filesystems",
  singular: "filesystem",
  shortNames: ["fs"],
  categories: ["aidc"],
  description:
    "A shared file system of the Compute and Storage Service and its mounts on CCI instances: created (or adopted by fileSystemId), mounted and unmounted from the spec, its state and each mount's state and address mirrored into status.",
  spec: FileSystemSpec,
  status: FileSystemStatus,
  printerColumns: kindColumns({
    shown: [
      phaseColumn("file system"),
      statusColumn("Size", "number", "sizeGB", "Size in GB."),
      statusColumn("Protocol", "string", "protocol", "Protocol of the file system."),
      statusColumn(
        "Mounts",
        "string",
        "mountsReady",
        "Mounted mounts of the spec over all of them.",
      ),
    ],
    readyMeaning: "Whether the file system and every mount of the spec are usable",
    wide: [serviceIdColumn("FS-ID", "fileSystemId", "file system")],
  }),
};
