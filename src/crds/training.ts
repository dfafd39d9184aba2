import { z } from "zod";
import { type CelRule, described, withRules } from "./definition.js";
import { INTEGER_LIMITS, localObjectReference, mountPath, serviceId, stringMap } from "./fields.js";

/**
 * Fields shared by TrainingJob and TrainingTemplate: the training configuration the
 * service stores for a task and for a template. Field names follow the service, with
 * its misspelling fixed (`trainingFramework`; the client writes `trainingFramwork`).
 */

/** `PRE_TRAINING` or `HPC`. */
export const TrainingType = z.enum(["PRE_TRAINING", "HPC"]);
/** The kind of training. */
export type TrainingType = z.infer<typeof TrainingType>;

/** `PyTorch`, `DeepSpeed`, `MPI` or `TensorFlow` (the service's letter case). */
export const TrainingFramework = z.enum(["PyTorch", "DeepSpeed", "MPI", "TensorFlow"]);
/** The training framework. */
export type TrainingFramework = z.infer<typeof TrainingFramework>;

/** `general`, `application` or `private`; must correspond to the image. */
export const ImageType = z.enum(["general", "application", "private"]);
/** The kind of container image. */
export type ImageType = z.infer<typeof ImageType>;

/** One storage mounted into every pod: a NasVolume of the namespace or a storage id. */
export const storageMountSchema = withRules(
  z
    .object({
      nasVolumeRef: localObjectReference(
        "NasVolume",
        "The NasVolume (same namespace) whose storage is mounted; its storageId is used once it is ready. Exactly one of nasVolumeRef and storageId.",
      ).optional(),
      storageId: serviceId(
        "Id of an existing storage instance of the service. Exactly one of nasVolumeRef and storageId.",
      ).optional(),
      storageType: described(
        z.string().min(1).max(64),
        "Storage type of the service (e.g. a capacity-type NAS); taken from the NasVolume when omitted.",
      ).optional(),
      fileDirectory: described(
        z.string().max(1024),
        "Source directory inside the storage; the storage root when omitted.",
      ).optional(),
      mountPath: mountPath(
        "Path inside the container: 2 to 64 letters, digits, underscores and slashes. The storage's default mount path when omitted.",
      ).optional(),
      readOnly: described(
        z.boolean(),
        "Mount read-only (default true); false mounts read-write.",
      ).default(true),
    })
    .meta({ description: "One storage mounted into every pod." }),
  {
    rule: "has(self.nasVolumeRef) != has(self.storageId)",
    message: "exactly one of nasVolumeRef or storageId must be set in a storage item",
  },
);
/** One mounted storage. */
export type StorageMount = z.infer<typeof storageMountSchema>;

const storageSchema = withRules(
  z.array(storageMountSchema).max(16).meta({
    description: "Storages mounted into every pod (at most 16), each at its own mountPath.",
  }),
  {
    rule: "self.all(a, !has(a.mountPath) || self.exists_one(b, has(b.mountPath) && b.mountPath == a.mountPath))",
    message:
      "storage mountPath values must be distinct: two storages cannot be mounted at one path",
  },
);

const envSchema = withRules(
  stringMap("Environment variables of every container, name to value (at most 64).", 64, 4096),
  {
    rule: "self.all(k, k.matches('^[A-Za-z_][A-Za-z0-9_]{0,127}$'))",
    // A fixed message: listing the offending names would cost too much for CEL's
    // estimator, which cannot bound the length of map keys.
    message:
      "env names must be letters, digits and underscores, not starting with a digit, at most 128 characters",
  },
);

/**
 * Scheduling priority 1 to 3, without a default: an omitted priority is inherited from
 * a template or source job, so the API server must not fill it in.
 */
export function priority(description: string) {
  return described(z.number().int().min(1).max(3), description);
}

/**
 * The zod shape of the training configuration shared by jobs and templates (priority
 * aside). A TEMPLATE or COPY job inherits each of these fields it omits, so none may
 * have a default (a unit test of the TrainingJob's inherited fields checks it).
 */
export const trainingConfigShape = {
  trainingType: described(TrainingType, "Kind of training: PRE_TRAINING or HPC.").optional(),
  trainingFramework: described(
    TrainingFramework,
    "Training framework: PyTorch, DeepSpeed, MPI or TensorFlow.",
  ).optional(),
  imageType: described(
    ImageType,
    "Kind of image: general, application or private; must correspond to image.",
  ).optional(),
  image: described(
    z.string().min(1).max(512),
    "Container image address of every worker.",
  ).optional(),
  productCode: described(
    z.string().min(1).max(128),
    "Resource specification that fixes the CPU, memory and GPU of each node: a CODE of `kubectl get trainingproducts` (the service's training product list).",
  ).optional(),
  workerCount: described(
    z.number().int().min(1).max(INTEGER_LIMITS.workerCount),
    `Number of nodes, 1 to ${INTEGER_LIMITS.workerCount}.`,
  ).optional(),
  storage: storageSchema.optional(),
  env: envSchema.optional(),
  enableAutoRetry: described(z.boolean(), "Retry the task automatically on failure.").optional(),
  maxRetryCount: described(
    z.number().int().min(1).max(100),
    "Maximum number of automatic retries (1 to 100); allowed only with enableAutoRetry: true.",
  ).optional(),
  enableTimeoutCancel: described(
    z.boolean(),
    "Cancel the task when it runs longer than timeoutHours.",
  ).optional(),
  timeoutHours: described(
    z.number().int().min(1).max(INTEGER_LIMITS.timeoutHours),
    `Maximum run time in hours, 1 to ${INTEGER_LIMITS.timeoutHours} (a year); allowed only with enableTimeoutCancel: true.`,
  ).optional(),
  startCommand: described(
    z.string().min(1).max(4096),
    "Training entry command run in each worker.",
  ).optional(),
};

/** Rules on the object that holds {@link trainingConfigShape}: settings that need their switch. */
export const trainingConfigRules: CelRule[] = [
  {
    rule: "!has(self.maxRetryCount) || (has(self.enableAutoRetry) && self.enableAutoRetry)",
    message:
      "maxRetryCount is allowed only with enableAutoRetry: true (the service ignores it otherwise)",
    fieldPath: ".maxRetryCount",
    reason: "FieldValueForbidden",
  },
  {
    rule: "!has(self.timeoutHours) || (has(self.enableTimeoutCancel) && self.enableTimeoutCancel)",
    message:
      "timeoutHours is allowed only with enableTimeoutCancel: true (the service ignores it otherwise)",
    fieldPath: ".timeoutHours",
    reason: "FieldValueForbidden",
  },
];
