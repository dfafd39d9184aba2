/**
 * Training tasks: the task record (detail and list item), the create request in its
 * caller form and on the wire, the small bodies of the task operations, and the
 * training resource specifications of the catalog.
 *
 * The wire field is `trainingFramwork` (sic); callers and parsed results use
 * `trainingFramework`. Responses are read with either spelling.
 */
import { z } from "zod";
import {
  CREATE_TYPES,
  type CreateType,
  IMAGE_TYPES,
  type ImageType,
  TASK_CREATE_WIRE_FRAMEWORK,
  TASK_CREATE_WIRE_TRAINING_TYPE,
  TRAINING_FRAMEWORKS,
  TRAINING_TYPES,
  type TrainingFramework,
  type TrainingType,
} from "./enums.js";
import { nasInstanceSchema } from "./nas.js";
import {
  idString,
  lenientEnum,
  matchEnum,
  optionalArray,
  optionalBoolean,
  optionalInt,
  optionalObject,
  optionalString,
  optionalStringMap,
  optionalTimestamp,
  responseEnum,
} from "./primitives.js";
import {
  type StorageConfigItem,
  storageConfigItemSchema,
  taskResourceSchema,
} from "./storage-config.js";

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

/** A task create request as callers give it (CRD-friendly names). */
export interface CreateTrainingTaskRequest {
  name: string;
  createType: CreateType;
  desc?: string;
  /** 1..3, smaller is higher; the service defaults to 3. */
  priority?: number;
  /** Any letter case of PRE_TRAINING or HPC. */
  trainingType?: TrainingType | string;
  /** Any letter case of general, application or private. */
  imageType?: ImageType | string;
  /** Any letter case of PyTorch, DeepSpeed, MPI or TensorFlow; sent as `trainingFramwork`. */
  trainingFramework?: TrainingFramework | string;
  productCode: string;
  workerCount: number;
  image: string;
  storageConfigs?: StorageConfigItem[];
  /** Controllers put their client token here (see create.ts). */
  env?: Record<string, string>;
  enableAutoRetry?: boolean;
  maxRetryCount?: number;
  enableTimeoutCancel?: boolean;
  timeoutHours?: number;
  startCommand?: string;
  /** Template to create from (createType TEMPLATE); an assumed field, sent only when set. */
  templateId?: string;
  /** Task to copy (createType COPY); an assumed field, sent only when set. */
  sourceTaskId?: string;
}

/**
 * Body of POST /v1/subscription/training/create as the service receives it: the
 * required fields and ranges of the spec, both spellings of the framework field and
 * enum values in any case (parsed to canonical members).
 */
export const createTrainingTaskBodySchema = z.object({
  name: z.string().min(1),
  createType: lenientEnum(CREATE_TYPES),
  desc: z.string().optional(),
  priority: z.int().min(1).max(3).optional(),
  trainingType: lenientEnum(TRAINING_TYPES).optional(),
  imageType: lenientEnum(IMAGE_TYPES).optional(),
  trainingFramwork: lenientEnum(TRAINING_FRAMEWORKS).optional(),
  trainingFramework: lenientEnum(TRAINING_FRAMEWORKS).optional(),
  productCode: z.string().min(1),
  workerCount: z.int().min(1),
  image: z.string().min(1),
  storageConfigs: z.array(storageConfigItemSchema).optional(),
  env: z.record(z.string(), z.string()).optional(),
  enableAutoRetry: z.boolean().optional(),
  maxRetryCount: z.int().min(0).optional(),
  enableTimeoutCancel: z.boolean().optional(),
  timeoutHours: z.int().min(1).optional(),
  startCommand: z.string().optional(),
  templateId: z.string().optional(),
  sourceTaskId: z.string().optional(),
});

/**
 * The wire body of a task create: `trainingFramwork` in the case of the create field
 * list (`pytorch`), `trainingType` as `pre_training`/`HPC`, `imageType` lower case,
 * `createType` upper case; unknown enum values are passed through for the schema to
 * refuse. Absent fields are left out.
 */
export function toCreateTrainingTaskBody(req: CreateTrainingTaskRequest): Record<string, unknown> {
  const { trainingFramework, trainingType, imageType, createType, ...rest } = req;
  const body: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rest)) if (v !== undefined) body[k] = v;
  body.createType = matchEnum(CREATE_TYPES, createType) ?? createType;
  if (trainingType !== undefined) {
    const t = matchEnum(TRAINING_TYPES, trainingType);
    body.trainingType = t ? TASK_CREATE_WIRE_TRAINING_TYPE[t] : trainingType;
  }
  if (imageType !== undefined) body.imageType = matchEnum(IMAGE_TYPES, imageType) ?? imageType;
  if (trainingFramework !== undefined) {
    const f = matchEnum(TRAINING_FRAMEWORKS, trainingFramework);
    body.trainingFramwork = f ? TASK_CREATE_WIRE_FRAMEWORK[f] : trainingFramework;
  }
  return body;
}

/** Body of PUT /v1/training/instance/{id}/desc. */
export const updateTaskDescBodySchema = z.object({ desc: z.string() });

/** Body of POST /v1/training/instance/{id}/saveAsTemplate. */
export const saveAsTemplateBodySchema = z.object({
  name: z.string().min(1),
  desc: z.string().optional(),
});

/** Query of the task list (an operation the spec refers to without a shape). */
export interface TrainingTaskListQuery {
  pageNo?: number;
  pageSize?: number;
  /** Fuzzy match on the task name. */
  name?: string;
  status?: string;
  aidcId?: number;
}

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
