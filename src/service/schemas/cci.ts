/**
 * CCI container compute instances: the list record and detail (one schema holding the
 * fields of both), the error details, and the save-image answer (its body is declared
 * beside the operations, in kinds/cciinstance.ts).
 */
import { z } from "zod";
import {
  idString,
  optionalBoolean,
  optionalInt,
  optionalObject,
  optionalString,
  optionalStringMap,
  optionalTimestamp,
  requiredString,
} from "./primitives.js";

/** CCI statuses the spec names; the list is open-ended. */
export const CCI_STATUSES = [
  "PENDING",
  "RUNNING",
  "STOPPED",
  "ERROR",
  "RELEASING",
  "FAILED",
] as const;

/** The resource object of an instance: all values text; gpuName a dash or absent without GPU. */
export const cciResourceSchema = z.object({
  cpuCores: optionalString,
  memoryGB: optionalString,
  gpuName: optionalString,
  gpuCount: optionalString,
  diskGB: optionalString,
  productName: optionalString,
  productCode: optionalString,
});

/**
 * A CCI instance: the fields shared by list records and the detail, the list-only
 * fields (tenant, health, saveImageStatus, …) and the detail-only fields (instanceMor,
 * cciResource, …), each optional. Times in RFC 3339.
 */
export const cciInstanceSchema = z.object({
  id: idString,
  name: optionalString,
  description: optionalString,
  orderInstanceId: optionalString,
  status: optionalString,
  subStatus: optionalString,
  priority: optionalInt,
  aidcId: optionalInt,
  createTime: optionalTimestamp,
  updateTime: optionalTimestamp,
  startTime: optionalTimestamp,
  stopTime: optionalTimestamp,
  releaseTime: optionalTimestamp,
  autoStopTime: optionalTimestamp,
  autoReleaseTime: optionalTimestamp,
  autoStopEnable: optionalBoolean,
  autoReleaseEnable: optionalBoolean,
  image: optionalString,
  resource: optionalObject(cciResourceSchema),
  env: optionalStringMap,
  webSSHUrl: optionalString,
  jupyterUrl: optionalString,
  vscodeUrl: optionalString,
  // list records
  tenantId: optionalString,
  tenantName: optionalString,
  createdBy: optionalString,
  creatorName: optionalString,
  jupyterHealth: optionalBoolean,
  vscodeHealth: optionalBoolean,
  /** Server time of the answer. */
  now: optionalTimestamp,
  /** True while an image save is in progress. */
  saveImageStatus: optionalBoolean,
  storageSize: optionalInt,
  bundle: optionalBoolean,
  // detail
  instanceMor: optionalString,
  productId: optionalString,
  price: optionalString,
  priceUnit: optionalInt,
  cciResource: optionalObject(cciResourceSchema),
  chargeMethod: optionalInt,
});

/** A CCI instance (list record or detail). */
export type CciInstance = z.infer<typeof cciInstanceSchema>;

/** Why an instance failed. */
export const cciErrorDetailsSchema = z.object({
  instanceId: optionalString,
  /** For example FAILED. */
  instanceStatus: optionalString,
  /** For example CREATE_VOLUME_FAILED. */
  instanceSubStatus: optionalString,
  /** Short description in English. */
  errorDescription: optionalString,
  /** Handling advice. */
  suggestion: optionalString,
  errorDetail: optionalString,
});

/** Error details of a CCI instance. */
export type CciErrorDetails = z.infer<typeof cciErrorDetailsSchema>;

/** Answer of save-image: the new image's id (wire field `image_id`, also read as `imageId`). */
export const saveCciImageResultSchema = z.preprocess(
  (v) => {
    if (v === null || typeof v !== "object") return v;
    const o = v as Record<string, unknown>;
    return { imageId: o.image_id ?? o.imageId };
  },
  z.object({ imageId: requiredString }),
);

/** The saved image. */
export type SaveCciImageResult = z.infer<typeof saveCciImageResultSchema>;
