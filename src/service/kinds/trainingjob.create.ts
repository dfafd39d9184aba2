/**
 * The create request of a TrainingJob's task (a part of trainingjob.ts, which sends it):
 * the request in its caller form, the body the service receives and the conversion
 * between them. The wire field is `trainingFramwork` (sic); callers use
 * `trainingFramework`.
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
} from "../schemas/enums.js";
import { lenientEnum, matchEnum } from "../schemas/primitives.js";
import { type StorageConfigItem, storageConfigItemSchema } from "../schemas/storage-config.js";

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
