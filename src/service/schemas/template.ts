/**
 * Training task templates: the create / full-update body (caller form and wire form)
 * and the template record of the assumed template list.
 */
import { z } from "zod";
import {
  IMAGE_TYPES,
  type ImageType,
  TRAINING_FRAMEWORKS,
  TRAINING_TYPES,
  type TrainingFramework,
  type TrainingType,
} from "./enums.js";
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
import { taskStorageSchema, withFrameworkSpelling } from "./training.js";

/** A template's resource request: `workerCount` an integer, every other key a string. */
export interface TemplateResource {
  type?: string;
  gpuName?: string;
  cpuCores?: string;
  gpuCount?: string;
  memoryGB?: string;
  productCode?: string;
  productName?: string;
  workerCount?: number;
  productPrice?: string;
}

/** Template fields as callers give them (create and full update); none is required. */
export interface TrainingTemplateInput {
  name?: string;
  desc?: string;
  aidcId?: number;
  trainingType?: TrainingType | string;
  /** Sent as `trainingFramwork`. */
  trainingFramework?: TrainingFramework | string;
  imageType?: ImageType | string;
  image?: string;
  env?: Record<string, string>;
  resource?: TemplateResource;
  enableAutoRetry?: boolean;
  storageConfigs?: StorageConfigItem[];
  maxRetryCount?: number;
  enableTimeoutCancel?: boolean;
  timeoutHours?: number;
  startCommand?: string;
  /** 1..3. */
  priority?: number;
}

/**
 * A template body as the service receives it: none required, priority 1..3, both
 * framework spellings, enum values in any case.
 */
export const templateBodySchema = z.object({
  name: z.string().optional(),
  desc: z.string().optional(),
  aidcId: z.int().optional(),
  trainingType: lenientEnum(TRAINING_TYPES).optional(),
  trainingFramwork: lenientEnum(TRAINING_FRAMEWORKS).optional(),
  trainingFramework: lenientEnum(TRAINING_FRAMEWORKS).optional(),
  imageType: lenientEnum(IMAGE_TYPES).optional(),
  image: z.string().optional(),
  env: z.record(z.string(), z.string()).optional(),
  resource: z
    .object({ workerCount: z.int().min(1).optional() })
    .catchall(z.string())
    .optional(),
  enableAutoRetry: z.boolean().optional(),
  storageConfigs: z.array(storageConfigItemSchema).optional(),
  maxRetryCount: z.int().min(0).optional(),
  enableTimeoutCancel: z.boolean().optional(),
  timeoutHours: z.int().min(1).optional(),
  startCommand: z.string().optional(),
  priority: z.int().min(1).max(3).optional(),
});

/**
 * The wire body of a template create or update, in the case of the template table
 * (`PRE_TRAINING`, `PyTorch`), with `trainingFramwork` spelled as the service spells it.
 */
export function toTemplateBody(input: TrainingTemplateInput): Record<string, unknown> {
  const { trainingFramework, trainingType, imageType, ...rest } = input;
  const body: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rest)) if (v !== undefined) body[k] = v;
  if (trainingType !== undefined) {
    body.trainingType = matchEnum(TRAINING_TYPES, trainingType) ?? trainingType;
  }
  if (trainingFramework !== undefined) {
    body.trainingFramwork = matchEnum(TRAINING_FRAMEWORKS, trainingFramework) ?? trainingFramework;
  }
  if (imageType !== undefined) body.imageType = matchEnum(IMAGE_TYPES, imageType) ?? imageType;
  return body;
}

/** A template as the assumed template list returns it: the template fields plus `id`. */
export const trainingTemplateSchema = z.preprocess(
  withFrameworkSpelling,
  z.object({
    id: idString,
    name: optionalString,
    desc: optionalString,
    aidcId: optionalInt,
    trainingType: responseEnum(TRAINING_TYPES),
    trainingFramework: responseEnum(TRAINING_FRAMEWORKS),
    imageType: responseEnum(IMAGE_TYPES),
    image: optionalString,
    env: optionalStringMap,
    resource: optionalObject(taskResourceSchema),
    enableAutoRetry: optionalBoolean,
    storageConfigs: optionalArray(taskStorageSchema),
    maxRetryCount: optionalInt,
    enableTimeoutCancel: optionalBoolean,
    timeoutHours: optionalInt,
    startCommand: optionalString,
    priority: optionalInt,
    createdTime: optionalTimestamp,
    lastUpdateTime: optionalTimestamp,
  }),
);

/** A saved template. */
export type TrainingTemplate = z.infer<typeof trainingTemplateSchema>;

/** Query of the assumed template list. */
export interface TemplateListQuery {
  pageNo?: number;
  pageSize?: number;
  /** Fuzzy match on the template name. */
  name?: string;
  aidcId?: number;
}
