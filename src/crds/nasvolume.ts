import { z } from "zod";
import { kindColumns, phaseColumn, serviceIdColumn, statusColumn } from "./columns.js";
import { timestamp } from "./conditions.js";
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
  mountPath,
  serviceDescription,
} from "./fields.js";
import { adoptedIdRule, CONNECTION_REF_RULE, mutabilityRules } from "./mutability.js";
import { ownReason, ownReasons, readEveryPoll } from "./reasons/own.js";
import {
  exportStatusShape,
  externalIdStatus,
  kindStatus,
  managedStatusShape,
  optionalString,
  serviceCreatedTime,
  subscriptionStatusShape,
} from "./status-fields.js";

/** The NasVolume spec fields that may not change freely (see mutability.ts). */
export const NAS_VOLUME_MUTABILITY: readonly FieldRule[] = [
  {
    field: "productCode",
    mutability: "immutable",
    owner: "service",
    why: "the product of a storage is fixed when it is subscribed; create a new NasVolume for another product",
  },
  {
    field: "name",
    mutability: "immutable",
    owner: "service",
    why: "it is the storage's directory name, fixed when the storage is subscribed",
  },
  {
    field: "description",
    mutability: "immutable",
    owner: "service",
    why: "the service offers no update of a storage's description",
  },
  {
    field: "aidcId",
    mutability: "immutable",
    owner: "service",
    why: "a storage cannot move to another compute center",
  },
  adoptedIdRule(
    "storageId",
    "it binds the object to its storage instance (it may be set once, e.g. to resolve CreateOutcomeUnknown); to use another storage, or when the storage no longer exists, delete this NasVolume and create a new one",
  ),
  CONNECTION_REF_RULE,
];

/** The condition reasons only NasVolume writes (reasons.ts has the shared ones). */
export const NAS_VOLUME_REASONS = ownReasons({
  ProductNotFoundRefused: ownReason(
    "Terminal",
    ["Ready", "Synced"],
    "The NAS product is not offered (in that compute center); nothing is ordered. Tried again when a NasProduct of that code appears (the catalog's next refresh).",
    "Use a CODE of the command the message names (`kubectl get nasproducts -l aidc.io/connection=...`: the NAS product list of the object's connection) and its CENTER as spec.aidcId, in a new NasVolume (productCode is immutable); or, for a product the service is adding, wait for it, or refresh the catalog now (aidc.io/reconcile-requested-at on its ServiceConnection or a NasProduct).",
  ),
  CapacityRefused: ownReason(
    "Terminal",
    ["Ready", "Synced"],
    "capacityGB is outside what the product allows; nothing is ordered or scaled.",
    "Set capacityGB within the product's bounds (the message gives them).",
  ),
  ProductUnavailable: ownReason(
    "UnderWay",
    ["Ready", "Synced"],
    "The NAS product cannot be provisioned right now; checked again every poll.",
  ),
  RemoteCapacityUnknown: ownReason(
    "UnderWay",
    ["Synced"],
    "The service did not report the storage's quota as a number, so a capacity change cannot be computed.",
  ),
  ScaleOutcomeUnknown: ownReason(
    "Terminal",
    ["Synced"],
    "A scale was sent but does not show in the quota; it is not sent twice.",
    "Check the storage, then remove the aidc.io/nas-scale annotation.",
  ),
  ShrinkBelowUsedRefused: readEveryPoll(
    ownReason(
      "Terminal",
      ["Synced"],
      "capacityGB is below the amount in use; the storage keeps its size.",
      "Free space in the storage (the shrink is sent at the next poll that reads less in use), or keep capacityGB at or above the amount in use.",
    ),
  ),
});

/** Desired state of a NasVolume: one NAS file storage of the service. */
export const NasVolumeSpec = withRules(
  z
    .object({
      productCode: described(
        z.string().min(1).max(128),
        "NAS product that fixes the storage type and billing: a CODE of `kubectl get nasproducts` (the service's NAS product list). Immutable.",
      ),
      name: described(
        z.string().min(1).max(128),
        "Directory name of the storage, its identifier in the service; metadata.name when omitted. Immutable.",
      ).optional(),
      description: serviceDescription(
        "Description sent when the storage is subscribed. Immutable: the service cannot change it.",
      ),
      capacityGB: described(
        z.number().int().min(1).max(INTEGER_LIMITS.capacityGB),
        `Capacity in GB, 1 to ${INTEGER_LIMITS.capacityGB} (1 PiB); the product's default when omitted. A change scales the storage up or down by the difference; a shrink below the used amount is refused.`,
      ).optional(),
      mountPath: mountPath(
        "Default mount path in containers: 2 to 64 letters, digits, underscores and slashes. A change updates the storage; running tasks keep their mounts.",
      ).optional(),
      aidcId: computeCenterId(
        "Compute center of the storage",
        "; the product's when omitted. Immutable.",
      ),
      storageId: adoptedId("storage", "subscribing a new one"),
      exportTo: exportTo(
        "STORAGE_ID (the storage id) and MOUNT_PATH (its default mount path)",
      ).optional(),
      ...managedSpecShape,
    })
    .meta({
      description:
        "Desired NAS storage. capacityGB, mountPath, exportTo, deletionPolicy and managementPolicies may change; productCode, name, description, aidcId and connectionRef are fixed at creation; storageId may only be set once.",
    }),
  ...mutabilityRules(NAS_VOLUME_MUTABILITY),
);
/** Desired state of a NasVolume, with the CRD's defaults applied. */
export type NasVolumeSpec = z.infer<typeof NasVolumeSpec>;

/** Phase of a NasVolume, the PHASE column. */
export const NasVolumePhase = z.enum([
  "Pending",
  "Creating",
  "Ready",
  "Scaling",
  "Failed",
  "Unknown",
]);
/** Phase of a NasVolume. */
export type NasVolumePhase = z.infer<typeof NasVolumePhase>;

/** The last capacity change the operator requested. */
export const nasScaleRecordSchema = z
  .object({
    scaleType: described(z.enum(["ScaleUp", "ScaleDown"]), "Direction of the change."),
    capacityGB: described(z.number().int(), "The change in GB (the service takes the change)."),
    fromGB: described(z.number().int(), "Capacity before the change.").optional(),
    toGB: described(z.number().int(), "Capacity requested (spec.capacityGB then)."),
    requestedTime: timestamp("When the service accepted the request.").optional(),
  })
  .meta({ description: "The last capacity change the operator requested." });
/** The last scale request of a NasVolume. */
export type NasScaleRecord = z.infer<typeof nasScaleRecordSchema>;

/** Observed state of a NasVolume. */
export const NasVolumeStatus = kindStatus("the storage", {
  ...managedStatusShape,
  phase: described(
    NasVolumePhase,
    "Pending (not ordered yet), Creating, Ready, Scaling, Failed, or Unknown (a remote status the operator does not know).",
  ).optional(),
  storageId: externalIdStatus("storage"),
  ...subscriptionStatusShape("subscription"),
  remoteStatus: optionalString("The service's storage status, verbatim (e.g. Creating, Running)."),
  name: optionalString("Directory name of the storage in the service."),
  storageType: optionalString("Storage type."),
  orderInstanceId: optionalString("Subscription instance id."),
  capacityGB: described(z.number(), "Capacity (quota) in GB.").optional(),
  usedGB: described(z.number(), "Used amount in GB.").optional(),
  mountPath: optionalString("Default mount path of the storage."),
  aidcId: described(z.number().int(), "Compute center of the storage.").optional(),
  productCode: optionalString("Product of the storage."),
  productName: optionalString("Name of the product."),
  price: optionalString("Price, without unit."),
  priceUnit: optionalString("Unit of the price."),
  createdTime: serviceCreatedTime("storage"),
  lastUpdateTime: timestamp("When the service last changed the storage.").optional(),
  releaseTime: timestamp("When the service released (or will release) the storage.").optional(),
  description: optionalString(
    "Description of the storage in the service (without the operator's token marker).",
  ),
  tenantId: optionalString("Tenant that owns the storage."),
  creator: optionalString("Who created the storage (creator name, else user id)."),
  sharePolicy: optionalString("Share policy of the storage, as the service names it."),
  createScene: optionalString(
    "Kind of instance the storage was created with (e.g. a CCI); absent when created on its own.",
  ),
  createSceneInstanceId: optionalString("Id of the instance the storage was created with."),
  isDefaultStorage: described(
    z.boolean(),
    "True when this is the storage bound at the creation of an instance.",
  ).optional(),
  lastScale: nasScaleRecordSchema.optional(),
  ...exportStatusShape,
});
/** Observed state of a NasVolume. */
export type NasVolumeStatus = z.infer<typeof NasVolumeStatus>;

/** A whole NasVolume object. */
export type NasVolume = CustomResource<NasVolumeSpec, NasVolumeStatus>;

/** The NasVolume kind (`nas`). */
export const nasVolumeCrd: CrdDefinition<typeof NasVolumeSpec, typeof NasVolumeStatus> = {
  group: GROUP,
  version: VERSION,
  kind: "NasVolume",
  health: {
    field: "phase",
    states: { Failed: { health: "Degraded", message: "The storage failed" } },
  },
  remote: "managed",
  mutability: NAS_VOLUME_MUTABILITY,
  reasons: NAS_VOLUME_REASONS,
  sharedReasons: ["Available", "Unavailable"],
  namespaced: true,
  plural: "nasvolumes",
  singular: "nasvolume",
  shortNames: ["nas"],
  categories: ["aidc"],
  description:
    "A NAS file storage of the Compute and Storage Service: subscribed (or adopted by storageId), scaled and re-pointed from the spec, its usage mirrored into status.",
  spec: NasVolumeSpec,
  status: NasVolumeStatus,
  printerColumns: kindColumns({
    shown: [
      phaseColumn("storage"),
      statusColumn("Capacity", "number", "capacityGB", "Capacity in GB."),
      statusColumn("Used", "number", "usedGB", "Used GB."),
      statusColumn("Mount-Path", "string", "mountPath", "Default mount path."),
    ],
    readyMeaning: "Whether the storage is usable",
    wide: [serviceIdColumn("Storage-ID", "storageId", "storage")],
  }),
};
