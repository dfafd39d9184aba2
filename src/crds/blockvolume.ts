import { z } from "zod";
import { statusBaseShape, timestamp } from "./conditions.js";
import {
  type CrdDefinition,
  type CustomResource,
  conditionColumns,
  described,
  type FieldRule,
  GROUP,
  VERSION,
  withRules,
} from "./definition.js";
import {
  connectionFields,
  deletionPolicy,
  INTEGER_LIMITS,
  localObjectReference,
  serviceId,
} from "./fields.js";
import { CONNECTION_REF_RULE, mutabilityRules } from "./mutability.js";
import { ownReason, ownReasons } from "./reasons.js";

/** The BlockVolume spec fields that may not change freely (see mutability.ts). */
export const BLOCK_VOLUME_MUTABILITY: readonly FieldRule[] = [
  ...(["name", "description", "sizeGB", "volumeType"] as const).map(
    (field): FieldRule => ({
      field,
      mutability: "immutable",
      owner: "service",
      why: "the service has no operation that changes a volume (its operations are create, attach, detach and delete); create a new BlockVolume instead",
    }),
  ),
  {
    field: "volumeId",
    mutability: "setOnce",
    owner: "operator",
    why: "it binds the object to its volume (it may be set once, e.g. to resolve CreateOutcomeUnknown); to use another volume, or when it no longer exists, delete this BlockVolume and create a new one",
  },
  CONNECTION_REF_RULE,
];

/** The condition reasons only BlockVolume writes (docs/conditions.md). */
export const BLOCK_VOLUME_REASONS = ownReasons({
  Attached: ownReason(
    "Ok",
    ["Ready"],
    "The volume exists and is attached to the instance spec.attachTo names.",
  ),
  Detached: ownReason(
    "Ok",
    ["Ready"],
    "The volume exists and is detached, as the spec (without attachTo) asks.",
  ),
  Attaching: ownReason(
    "UnderWay",
    ["Ready"],
    "The volume is being attached to the instance spec.attachTo names, or detached first to move it there; the message says which.",
  ),
  Detaching: ownReason(
    "UnderWay",
    ["Ready"],
    "The volume is being detached because spec.attachTo was removed.",
  ),
  VolumeUnavailable: ownReason(
    "UnderWay",
    ["Ready"],
    "The service shows the volume in a state the operator does not act on (the message has it); nothing is changed until it is available or attached.",
  ),
  AttachedElsewhere: ownReason(
    "Terminal",
    ["Ready", "Synced"],
    "The volume is attached to an instance this object did not attach it to (someone else did); the operator never detaches it by itself, and does not delete it while attached. Detach it in the service, or set spec.attachTo to that instance.",
  ),
  VolumeFailed: ownReason(
    "Terminal",
    ["Ready"],
    "The service shows the volume in its error state. Delete the BlockVolume (and the volume) and create a new one.",
  ),
  CciInstanceNotFound: ownReason(
    "UnderWay",
    ["ReferencesResolved", "Ready", "Synced"],
    "spec.attachTo.cciInstanceRef names a CciInstance that does not exist in the namespace; nothing is created or attached until it does.",
  ),
  CciInstanceNotBound: ownReason(
    "UnderWay",
    ["ReferencesResolved", "Ready", "Synced"],
    "The CciInstance spec.attachTo.cciInstanceRef names is not bound to an instance yet; nothing is created or attached until it is.",
  ),
});

/** Where a BlockVolume is attached: a CciInstance of the namespace, or an instance id. */
export const BlockVolumeAttachment = withRules(
  z
    .object({
      cciInstanceRef: localObjectReference(
        "CciInstance",
        "The CciInstance (same namespace) whose instance the volume is attached to, once that CciInstance is bound. Exactly one of cciInstanceRef and instanceId.",
      ).optional(),
      instanceId: serviceId(
        "Id of the CCI instance the volume is attached to. Exactly one of cciInstanceRef and instanceId.",
      ).optional(),
    })
    .meta({
      description:
        "The instance the volume is attached to. A change detaches the volume and attaches it to the new instance; removing attachTo detaches it.",
    }),
  {
    rule: "has(self.cciInstanceRef) != has(self.instanceId)",
    message:
      "exactly one of cciInstanceRef or instanceId must be set to say where the volume is attached",
  },
);
/** Where a BlockVolume is attached. */
export type BlockVolumeAttachment = z.infer<typeof BlockVolumeAttachment>;

/** Desired state of a BlockVolume: one block volume of the service. */
export const BlockVolumeSpec = withRules(
  z
    .object({
      name: described(
        z.string().min(1).max(128),
        "Name of the volume in the service; metadata.name when omitted. Immutable.",
      ).optional(),
      description: described(
        z.string().max(1024),
        "Description sent when the volume is created. Immutable: the service cannot change it.",
      ).optional(),
      sizeGB: described(
        z.number().int().min(1).max(INTEGER_LIMITS.capacityGB),
        `Size of the volume in GB, 1 to ${INTEGER_LIMITS.capacityGB} (1 PiB). Immutable: the service has no resize operation.`,
      ),
      volumeType: described(
        z.string().min(1).max(64),
        "Type of the volume, as the service names it (e.g. ssd). Immutable.",
      ),
      attachTo: BlockVolumeAttachment.optional(),
      volumeId: serviceId(
        "Id of an existing volume to adopt instead of creating one. May be set once on an object that has none (e.g. to resolve CreateOutcomeUnknown), never changed or removed.",
      ).optional(),
      deletionPolicy,
      ...connectionFields,
    })
    .meta({
      description:
        "Desired block volume. attachTo and deletionPolicy may change; name, description, sizeGB and volumeType are fixed at creation; volumeId may only be set once.",
    }),
  ...mutabilityRules(BLOCK_VOLUME_MUTABILITY),
);
/** Desired state of a BlockVolume, with the CRD's defaults applied. */
export type BlockVolumeSpec = z.infer<typeof BlockVolumeSpec>;

/** Phase of a BlockVolume, the PHASE column. */
export const BlockVolumePhase = z.enum([
  "Pending",
  "Creating",
  "Available",
  "Attaching",
  "Attached",
  "Detaching",
  "Deleting",
  "Failed",
  "Unknown",
]);
/** Phase of a BlockVolume. */
export type BlockVolumePhase = z.infer<typeof BlockVolumePhase>;

const str = (description: string) => described(z.string(), description).optional();

/** Observed state of a BlockVolume. */
export const BlockVolumeStatus = z
  .object({
    ...statusBaseShape,
    phase: described(
      BlockVolumePhase,
      "Pending (not created yet), Creating, Available (detached), Attaching, Attached, Detaching, Deleting, Failed, or Unknown (a remote state the operator does not know).",
    ).optional(),
    volumeId: str("Id of the volume in the service; also in the annotation aidc.io/external-id."),
    state: str("The service's volume state, verbatim (e.g. available, in-use)."),
    attachedInstanceId: str(
      "Id of the instance the volume is attached to, as the service shows it; absent when detached.",
    ),
    sizeGB: described(z.number().int(), "Size of the volume in GB.").optional(),
    volumeType: str("Type of the volume."),
    name: str("Name of the volume in the service."),
    createdTime: timestamp("When the service created the volume.").optional(),
  })
  .meta({ description: "Observed state of the volume, written by the operator." });
/** Observed state of a BlockVolume. */
export type BlockVolumeStatus = z.infer<typeof BlockVolumeStatus>;

/** A whole BlockVolume object. */
export type BlockVolume = CustomResource<BlockVolumeSpec, BlockVolumeStatus>;

/** The BlockVolume kind (`bv`). */
export const blockVolumeCrd: CrdDefinition<typeof BlockVolumeSpec, typeof BlockVolumeStatus> = {
  group: GROUP,
  version: VERSION,
  kind: "BlockVolume",
  health: {
    field: "phase",
    states: { Failed: { health: "Degraded", message: "The volume failed" } },
  },
  remote: "managed",
  mutability: BLOCK_VOLUME_MUTABILITY,
  reasons: BLOCK_VOLUME_REASONS,
  sharedReasons: ["Resolved"],
  namespaced: true,
  plural: "blockvolumes",
  singular: "blockvolume",
  shortNames: ["bv"],
  categories: ["aidc"],
  description:
    "A block volume of the Compute and Storage Service: created (or adopted by volumeId), attached to a CCI instance and moved between instances from the spec, detached before it is deleted.",
  spec: BlockVolumeSpec,
  status: BlockVolumeStatus,
  printerColumns: [
    {
      name: "Phase",
      type: "string",
      jsonPath: ".status.phase",
      description: "Phase of the volume.",
    },
    { name: "Size", type: "integer", jsonPath: ".status.sizeGB", description: "Size in GB." },
    {
      name: "Type",
      type: "string",
      jsonPath: ".status.volumeType",
      description: "Type of the volume.",
    },
    {
      name: "Attached-To",
      type: "string",
      jsonPath: ".status.attachedInstanceId",
      description: "Id of the instance the volume is attached to.",
    },
    ...conditionColumns("Whether the volume exists and is where the spec asks"),
    {
      name: "Age",
      type: "date",
      jsonPath: ".metadata.creationTimestamp",
      description: "Time since the object was created.",
    },
    {
      name: "Volume-ID",
      type: "string",
      jsonPath: ".status.volumeId",
      description: "Id of the volume in the service.",
      priority: 1,
    },
  ],
};
