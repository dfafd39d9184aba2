import { z } from "zod";
import { CCI_INSTANCE_REASONS } from "./cciinstance-reasons.js";
import { kindColumns, statusColumn } from "./columns.js";
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
import { computeCenterId, connectionFields, exportTo, serviceId } from "./fields.js";
import { CONNECTION_REF_RULE, mutabilityRules, sameRuleFor } from "./mutability.js";
import {
  exportStatusShape,
  kindStatus,
  managedStatusShape,
  optionalFlag,
  optionalString,
} from "./status-fields.js";

export * from "./cciinstance-reasons.js";

/** An image to save from the instance: `imageName:tag`, saved once. */
export const cciImageSchema = z
  .object({
    imageName: described(
      z
        .string()
        .min(1)
        .max(255)
        .regex(/^[a-zA-Z0-9][a-zA-Z0-9._/-]*$/),
      "Name of the image to save: letters, digits, '.', '_', '-' and '/', starting with a letter or digit.",
    ),
    tag: described(
      z
        .string()
        .min(1)
        .max(128)
        .regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/),
      "Tag of the image: up to 128 letters, digits, '_', '.' and '-', not starting with '.' or '-'.",
    ),
  })
  .meta({ description: "An image to save from the instance; each name and tag is saved once." });
/** An image to save from a CCI instance. */
export type CciImage = z.infer<typeof cciImageSchema>;

/** The CciInstance spec fields that select the observed instance, fixed (see mutability.ts). */
export const CCI_INSTANCE_MUTABILITY: readonly FieldRule[] = [
  ...sameRuleFor(["instanceId", "name", "aidcId"], {
    mutability: "immutable",
    owner: "operator",
    why: "it selects the observed instance; create another CciInstance to observe a different one",
  }),
  CONNECTION_REF_RULE,
];

/** Desired state of a CciInstance: which instance to observe and which images to save. */
export const CciInstanceSpec = withRules(
  z
    .object({
      instanceId: serviceId(
        "Id of the CCI instance to observe. Exactly one of instanceId and name. Immutable.",
      ).optional(),
      name: described(
        z.string().min(1).max(128),
        "Name of the CCI instance to observe; exactly one instance must match (with aidcId when set). Exactly one of instanceId and name. Immutable.",
      ).optional(),
      aidcId: computeCenterId(
        "Compute center to look for name in",
        "; allowed only with name. Immutable.",
      ),
      images: z
        .array(cciImageSchema)
        .max(32)
        .optional()
        .meta({
          description:
            "Images to save from the instance (at most 32); each imageName and tag is saved once, and removing an entry does not delete the saved image.",
          "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": ["imageName", "tag"],
        }),
      exportTo: exportTo(
        "CCI_INSTANCE_ID and the access addresses WEBSSH_URL, JUPYTER_URL, VSCODE_URL (those the instance has)",
      ).optional(),
      ...connectionFields,
    })
    .meta({
      description:
        "Which CCI instance to observe (the service cannot create or delete one) and which images to save from it.",
    }),
  {
    rule: "has(self.instanceId) != has(self.name)",
    message: "exactly one of instanceId or name must be set to select the CCI instance",
  },
  {
    rule: "!has(self.aidcId) || has(self.name)",
    message: "aidcId is allowed only with name (it narrows the search by name)",
    fieldPath: ".aidcId",
    reason: "FieldValueForbidden",
  },
  ...mutabilityRules(CCI_INSTANCE_MUTABILITY),
);
/** Desired state of a CciInstance. */
export type CciInstanceSpec = z.infer<typeof CciInstanceSpec>;

/** State of one image save. */
export const CciImageState = z.enum(["Pending", "Saving", "Saved", "Failed"]);
/** State of one image save. */
export type CciImageState = z.infer<typeof CciImageState>;

/** Outcome of saving one image of spec.images. */
export const cciImageStatusSchema = z
  .object({
    imageName: described(z.string(), "Name of the image (as in spec.images)."),
    tag: described(z.string(), "Tag of the image (as in spec.images)."),
    imageId: optionalString("Id of the saved image in the service."),
    state: described(CciImageState, "Pending (not requested yet), Saving, Saved or Failed."),
    message: optionalString("Why the save failed, or other detail."),
    requestedTime: timestamp("When the save was requested.").optional(),
  })
  .meta({ description: "Outcome of saving one image." });
/** Outcome of saving one image. */
export type CciImageStatus = z.infer<typeof cciImageStatusSchema>;

/**
 * One block volume attached to the instance, or one file system mounted on it, as the
 * object of this namespace that manages it shows it (the same shape for every kind of
 * storage, so that a kind added later fills it the same way).
 */
export const attachedStorageSchema = z
  .object({
    kind: described(z.string(), "Kind of the object: BlockVolume or FileSystem."),
    name: described(z.string(), "Name of the object in this namespace."),
    id: optionalString("Id of the volume or file system in the service."),
    state: optionalString(
      "State of the attachment or mount as the object shows it (a BlockVolume's phase, a FileSystem mount's state).",
    ),
    mountPath: optionalString("Path on the instance, when the object says (a FileSystem mount)."),
  })
  .meta({ description: "A volume attached to, or a file system mounted on, the instance." });
/** One attached volume or mounted file system. */
export type AttachedStorage = z.infer<typeof attachedStorageSchema>;

/** Observed state of a CciInstance. */
export const CciInstanceStatus = kindStatus("the instance", {
  instanceId: optionalString(
    "Id of the observed instance; also in the annotation aidc.io/external-id.",
  ),
  name: optionalString("Name of the instance."),
  remoteStatus: optionalString(
    "The instance's status, verbatim (e.g. PENDING, RUNNING, STOPPED, ERROR).",
  ),
  remoteSubStatus: optionalString("The instance's sub-status, verbatim."),
  aidcId: described(z.number().int(), "Compute center of the instance.").optional(),
  orderInstanceId: optionalString("Subscription instance id."),
  image: optionalString("Image the instance runs."),
  description: optionalString("Description of the instance in the service."),
  priority: described(z.number().int(), "Scheduling priority of the instance.").optional(),
  tenant: optionalString("Tenant that owns the instance (its name, else its id)."),
  creator: optionalString("Who created the instance (creator name, else user id)."),
  chargeMethod: described(
    z.number().int(),
    "Charge method code of the instance, as the service gives it.",
  ).optional(),
  storageSize: described(
    z.number().int(),
    "Size of the storage mounted on the instance, as the service gives it.",
  ).optional(),
  envKeys: z.array(z.string()).max(128).optional().meta({
    description:
      "Names of the instance's environment variables, sorted (at most 128); values are never copied into status.",
  }),
  urls: z
    .object({
      webSSH: optionalString("Web terminal address."),
      jupyter: optionalString("Jupyter address."),
      vscode: optionalString("VS Code address."),
    })
    .optional()
    .meta({ description: "Access addresses of the instance." }),
  health: z
    .object({
      jupyter: optionalFlag("True when the Jupyter service is available."),
      vscode: optionalFlag("True when the VS Code service is available."),
    })
    .optional()
    .meta({ description: "Health of the instance's services." }),
  resource: z
    .object({
      cpuCores: optionalString("CPU cores."),
      memoryGB: optionalString("Memory in GB."),
      gpuName: optionalString("GPU model; empty without GPU."),
      gpuCount: optionalString("GPU count."),
      diskGB: optionalString("Disk in GB."),
      productName: optionalString("Name of the resource specification."),
      productCode: optionalString("Resource specification."),
    })
    .optional()
    .meta({ description: "Resources of the instance." }),
  createdTime: timestamp("When the instance was created.").optional(),
  lastUpdateTime: timestamp("When the instance last changed.").optional(),
  startTime: timestamp("When the instance last started.").optional(),
  stopTime: timestamp("When the instance last stopped.").optional(),
  releaseTime: timestamp("When the instance was released.").optional(),
  autoStopEnabled: optionalFlag("True when the instance stops automatically at autoStopTime."),
  autoStopTime: timestamp("When the instance stops automatically.").optional(),
  autoReleaseEnabled: optionalFlag("True when the instance is released automatically."),
  autoReleaseTime: timestamp("When the instance is released automatically.").optional(),
  price: optionalString("Price, without unit."),
  priceUnit: described(z.number().int(), "Code of the price unit.").optional(),
  saveImageInProgress: optionalFlag("True while the service saves an image of the instance."),
  images: z.array(cciImageStatusSchema).optional().meta({
    description: "Outcome of each image of spec.images.",
  }),
  attachedStorage: z.array(attachedStorageSchema).optional().meta({
    description:
      "The BlockVolumes attached to the instance and the FileSystems mounted on it, from the objects of this namespace (their status; no service call). Absent when there are none.",
  }),
  error: z
    .object({
      description: optionalString("Short description of the error."),
      suggestion: optionalString("Handling advice."),
      detail: optionalString("Detailed message."),
      instanceStatus: optionalString("Instance status the details are about (e.g. FAILED)."),
      instanceSubStatus: optionalString(
        "Sub-status the details are about (e.g. CREATE_VOLUME_FAILED).",
      ),
    })
    .optional()
    .meta({ description: "Error details of an instance in ERROR or FAILED; absent otherwise." }),
  ...managedStatusShape,
  ...exportStatusShape,
});
/** Observed state of a CciInstance. */
export type CciInstanceStatus = z.infer<typeof CciInstanceStatus>;

/** A whole CciInstance object. */
export type CciInstance = CustomResource<CciInstanceSpec, CciInstanceStatus>;

/** The CciInstance kind (`cci`). */
export const cciInstanceCrd: CrdDefinition<typeof CciInstanceSpec, typeof CciInstanceStatus> = {
  group: GROUP,
  version: VERSION,
  kind: "CciInstance",
  health: {
    // The observed instance's own state (the operator cannot create or repair it).
    field: "remoteStatus",
    states: {
      ERROR: { health: "Degraded", message: "The instance is ERROR" },
      FAILED: { health: "Degraded", message: "The instance is FAILED" },
      STOPPED: { health: "Suspended", message: "The instance is STOPPED" },
    },
  },
  remote: "observed",
  mutability: CCI_INSTANCE_MUTABILITY,
  reasons: CCI_INSTANCE_REASONS,
  sharedReasons: ["Unavailable"],
  namespaced: true,
  plural: "cciinstances",
  singular: "cciinstance",
  shortNames: ["cci"],
  categories: ["aidc"],
  description:
    "An observed CCI container compute instance of the Compute and Storage Service: its status, access addresses and errors mirrored into status, and images saved from it on request. The operator never creates or deletes the instance.",
  spec: CciInstanceSpec,
  status: CciInstanceStatus,
  printerColumns: kindColumns({
    shown: [
      statusColumn("Status", "string", "remoteStatus", "Status of the instance."),
      statusColumn("Sub-Status", "string", "remoteSubStatus", "Sub-status of the instance."),
      statusColumn("Instance", "string", "instanceId", "Id of the observed instance."),
    ],
    readyMeaning: "Whether the instance is running",
  }),
};
