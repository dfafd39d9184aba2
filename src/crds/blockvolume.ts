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
  cciInstanceTarget,
  exportTo,
  INTEGER_LIMITS,
  managedSpecShape,
  serviceDescription,
  serviceName,
} from "./fields.js";
import { adoptedIdRule, CONNECTION_REF_RULE, mutabilityRules, sameRuleFor } from "./mutability.js";
import { readEveryPoll } from "./reasons/own.js";
import { ownReason, ownReasons } from "./reasons.js";
import {
  exportStatusShape,
  externalIdStatus,
  kindStatus,
  managedStatusShape,
  optionalString,
  serviceCreatedTime,
} from "./status-fields.js";

/** The BlockVolume spec fields that may not change freely (see mutability.ts). */
export const BLOCK_VOLUME_MUTABILITY: readonly FieldRule[] = [
  ...sameRuleFor(["name", "description", "sizeGB", "volumeType"], {
    mutability: "immutable",
    owner: "service",
    why: "the service has no operation that changes a volume (its operations are create, attach, detach and delete); create a new BlockVolume instead",
  }),
  adoptedIdRule(
    "volumeId",
    "it binds the object to its volume (it may be set once, e.g. to resolve CreateOutcomeUnknown); to use another volume, or when it no longer exists, delete this BlockVolume and create a new one",
  ),
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
    "The volume is being attached to the instance spec.attachTo names, or detached first to move it there, or without Update in spec.managementPolicies is not moved; the message says which.",
  ),
  Detaching: ownReason(
    "UnderWay",
    ["Ready"],
    "The volume is being detached because spec.attachTo was removed (without Update in spec.managementPolicies it is not: the message says so).",
  ),
  VolumeUnavailable: ownReason(
    "UnderWay",
    ["Ready"],
    "The service shows the volume in a state the operator does not act on (the message has it); nothing is changed until it is available or attached.",
  ),
  AttachedElsewhere: ownReason(
    "Terminal",
    ["Ready", "Synced"],
    "The volume is attached to an instance this object did not attach it to (someone else did); the operator never detaches it by itself, and does not delete it while attached.",
    "Detach it in the service, or set spec.attachTo to that instance.",
  ),
  VolumeFailed: readEveryPoll(
    ownReason(
      "Terminal",
      ["Ready"],
      "The service shows the volume in its error state.",
      "Delete the BlockVolume (and the volume) and create a new one.",
    ),
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
export const BlockVolumeAttachment = cciInstanceTarget({
  description:
    "The instance the volume is attached to. A change detaches the volume and attaches it to the new instance; removing attachTo detaches it.",
  ref: "The CciInstance (same namespace) whose instance the volume is attached to, once that CciInstance is bound. Exactly one of cciInstanceRef and instanceId.",
  id: "Id of the CCI instance the volume is attached to. Exactly one of cciInstanceRef and instanceId.",
  message:
    "exactly one of cciInstanceRef or instanceId must be set to say where the volume is attached",
});
/** Where a BlockVolume is attached. */
export type BlockVolumeAttachment = z.infer<typeof BlockVolumeAttachment>;

/** Desired state of a BlockVolume: one block volume of the service. */
export const BlockVolumeSpec = withRules(
  z
    .object({
      name: serviceName("volume", { immutable: true }),
      description: serviceDescription(
        "Description sent when the volume is created. Immutable: the service cannot change it.",
      ),
      sizeGB: described(
        z.number().int().min(1).max(INTEGER_LIMITS.capacityGB),
        `Size of the volume in GB, 1 to ${INTEGER_LIMITS.capacityGB} (1 PiB). Immutable: the service has no resize operation.`,
      ),
      volumeType: described(
        z.string().min(1).max(64),
        "Type of the volume, as the service names it (e.g. ssd). Immutable.",
      ),
      attachTo: BlockVolumeAttachment.optional(),
      volumeId: adoptedId("volume"),
      exportTo: exportTo("VOLUME_ID and ATTACHED_INSTANCE_ID (absent while detached)").optional(),
      ...managedSpecShape,
    })
    .meta({
      description:
        "Desired block volume. attachTo, exportTo, deletionPolicy and managementPolicies may change; name, description, sizeGB, volumeType and connectionRef are fixed at creation; volumeId may only be set once.",
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

/** Observed state of a BlockVolume. */
export const BlockVolumeStatus = kindStatus("the volume", {
  ...managedStatusShape,
  phase: described(
    BlockVolumePhase,
    "Pending (not created yet), Creating, Available (detached), Attaching, Attached, Detaching, Deleting, Failed, or Unknown (a remote state the operator does not know).",
  ).optional(),
  volumeId: externalIdStatus("volume"),
  state: optionalString("The service's volume state, verbatim (e.g. available, in-use)."),
  attachedInstanceId: optionalString(
    "Id of the instance the volume is attached to, as the service shows it; absent when detached.",
  ),
  sizeGB: described(z.number().int(), "Size of the volume in GB.").optional(),
  volumeType: optionalString("Type of the volume."),
  name: optionalString("Name of the volume in the service."),
  createdTime: serviceCreatedTime("volume"),
  description: optionalString(
    "Description of the volume in the service (without the operator's token and owner marks).",
  ),
  ...exportStatusShape,
});
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
  printerColumns: kindColumns({
    shown: [
      phaseColumn("volume"),
      statusColumn("Size", "integer", "sizeGB", "Size in GB."),
      statusColumn("Type", "string", "volumeType", "Type of the volume."),
      statusColumn(
        "Attached-To",
        "string",
        "attachedInstanceId",
        "Id of the instance the volume is attached to.",
      ),
    ],
    readyMeaning: "Whether the volume exists and is where the spec asks",
    wide: [serviceIdColumn("Volume-ID", "volumeId", "volume")],
  }),
};
