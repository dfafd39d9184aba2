/**
 * Training tasks as the service answers them: the task record (detail and list item)
 * and the training resource specifications of the catalog (the bodies the task
 * operations send are declared beside them, in kinds/trainingjob.ts and its parts).
 *
 * The wire field is `trainingFramwork` (sic); parsed results use `trainingFramework`.
 * Responses are read with either spelling.
 */
import { z } from "zod";
import { CREATE_TYPES, IMAGE_TYPES, TRAINING_FRAMEWORKS, TRAINING_TYPES } from "./enums.js";
import { nasInstanceSchema } from "./nas.js";
import {
  idString,
  optionalArray,
  optionalBoolean,
  optionalInt,
  optionalObject,
  optionalString,
  optionalStringMap,
  optionalTimestamp,
  responseEnum,
} from "./primitives.js";
import { taskResourceSchema } from "./storage-config.js";

/**
 * Copies the wire spelling `trainingFramwork` to `trainingFramework` when the latter
 * is absent, so that either spelling parses to the CRD-friendly name.
 */
export function withFrameworkSpelling(v: unknown): unknown {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
  const o = v as Record<string, unknown>;
  if (o.trainingFramework === undefined && o.trainingFramwork !== undefined) {
    return { ...o, trainingFramework: o.trainingFramwork };
  }
  return v;
}

/** One execution record of a task. */
export const execInfoSchema = z.object({
  trainingTaskId: optionalString,
  status: optionalString,
  info: optionalString,
  createTime: optionalTimestamp,
});

/** A mounted storage of a task: a NAS instance record, plus the mount's own fields when present. */
export const taskStorageSchema = nasInstanceSchema.extend({
  id: optionalString,
  storageId: optionalString,
  fileDirectory: optionalString,
  onlyRead: optionalBoolean,
});

/** A training task as the detail (and, by assumption, the list) returns it. */
export const trainingTaskSchema = z.preprocess(
  withFrameworkSpelling,
  z.object({
    id: idString,
    name: optionalString,
    desc: optionalString,
    trainingType: responseEnum(TRAINING_TYPES),
    trainingFramework: responseEnum(TRAINING_FRAMEWORKS),
    imageType: responseEnum(IMAGE_TYPES),
    createType: responseEnum(CREATE_TYPES),
    priority: optionalInt,
    image: optionalString,
    aidcId: optionalInt,
    storageConfigs: optionalArray(taskStorageSchema),
    env: optionalStringMap,
    enableAutoRetry: optionalBoolean,
    maxRetryCount: optionalInt,
    enableTimeoutCancel: optionalBoolean,
    timeoutHours: optionalInt,
    startCommand: optionalString,
    resource: optionalObject(taskResourceSchema),
    createdBy: optionalString,
    creatorName: optionalString,
    createdTime: optionalTimestamp,
    startTime: optionalTimestamp,
    lastUpdateTime: optionalTimestamp,
    status: optionalString,
    source: optionalString,
    /** The template a TEMPLATE task came from; assumed, like the create request's field. */
    templateId: optionalString,
    /** The task a COPY task copied; assumed, like the create request's field. */
    sourceTaskId: optionalString,
    execInfos: optionalArray(execInfoSchema),
  }),
);

/** A training task; `trainingFramework` spelled correctly, times in RFC 3339. */
export type TrainingTask = z.infer<typeof trainingTaskSchema>;

/** A training resource specification; `productCode` is what a task create uses. */
export const trainingProductSchema = z.object({
  name: z.preprocess((v) => (v === null ? undefined : v), z.string()),
  aidcId: optionalInt,
  productCode: optionalString,
  cpuCores: optionalString,
  memoryGB: optionalString,
  /** A dash or absent when there is no GPU. */
  gpuName: optionalString,
  gpuCount: optionalString,
  diskGB: optionalString,
  price: optionalString,
  priceUnit: optionalInt,
  /** Available units. */
  remainingCount: optionalInt,
  ext: optionalStringMap,
});

/** A training resource specification. */
export type TrainingProduct = z.infer<typeof trainingProductSchema>;
