/**
 * Training task templates: the template record of the assumed template list (the
 * create / full-update body is declared beside the operations, in
 * kinds/trainingtemplate.ts).
 */
import { z } from "zod";
import { IMAGE_TYPES, TRAINING_FRAMEWORKS, TRAINING_TYPES } from "./enums.js";
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
import { taskStorageSchema, withFrameworkSpelling } from "./training.js";

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
