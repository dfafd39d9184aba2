/**
 * NAS storage: the instance record (also the item of a task's storages), the
 * subscribe, scale and mount-path request bodies, and the NAS products of the catalog
 * and their availability check. Request body schemas describe the
 * wire as the spec states it; the client validates what it sends with them and the
 * emulator validates what it receives with them.
 */
import { z } from "zod";
import { SCALE_TYPES, type ScaleType } from "./enums.js";
import {
  idString,
  lenientEnum,
  optionalBoolean,
  optionalInt,
  optionalObject,
  optionalString,
  optionalTimestamp,
  responseEnum,
} from "./primitives.js";

/** The mountPath rule of PUT mountPath: 2 to 64 letters, digits, `_` or `/`. */
const MOUNT_PATH_PATTERN = /^[a-zA-Z0-9_/]{2,64}$/;

/** NAS instance statuses the spec names (the list is not closed). */
export const NAS_STATUSES = ["Creating", "Running"] as const;

/** A NAS storage instance as the service returns it; times in RFC 3339. */
export const nasInstanceSchema = z.object({
  id: idString,
  name: optionalString,
  description: optionalString,
  orderInstanceId: optionalString,
  /** `RUNNING` too, the case of every other status the spec shows: read as `Running`. */
  status: responseEnum(NAS_STATUSES),
  storageType: optionalString,
  /** Limit in GB, as text. */
  quota: optionalString,
  /** Used amount in GB, as text. */
  used: optionalString,
  mountPath: optionalString,
  resource: optionalObject(
    z.object({ quota: optionalString, productName: optionalString, productCode: optionalString }),
  ),
  createdTime: optionalTimestamp,
  lastUpdateTime: optionalTimestamp,
  releaseTime: optionalTimestamp,
  tenantId: optionalString,
  price: optionalString,
  /** Text; the task detail schema shows an integer code, kept as its text. */
  priceUnit: optionalString,
  currencyUnitOfMeasure: optionalInt,
  currencyUnitPriceFormula: optionalString,
  sharePolicy: optionalObject(z.object({ policy: optionalString })),
  createdBy: optionalString,
  createdByName: optionalString,
  lastUpdateBy: optionalString,
  lastUpdateByName: optionalString,
  createScene: optionalString,
  createSceneInstanceId: optionalString,
  isDefaultStorage: optionalBoolean,
  aidcId: optionalInt,
});

/** A NAS storage instance. */
export type NasInstance = z.infer<typeof nasInstanceSchema>;

/** Body of POST /v1/subscription/nasStorage/create on the wire. */
export const subscribeNasBodySchema = z.object({
  productCode: z.string().min(1),
  storageParams: z
    .object({
      name: z.string().optional(),
      description: z.string().optional(),
      storageCapacity: z
        .string()
        .regex(/^\d+$/, "storageCapacity must be a whole number of GB written as a string")
        .optional(),
      mountPath: z.string().optional(),
    })
    .optional(),
});

/** Wire body of a NAS subscription. */
export type SubscribeNasBody = z.infer<typeof subscribeNasBodySchema>;

/** A NAS subscription as callers give it; `storageCapacity` may be a number (GB). */
export interface SubscribeNasRequest {
  productCode: string;
  storageParams?: {
    /** Directory name, the identifier of the storage. */
    name?: string;
    /** Free text; controllers put their client token here (see create.ts). */
    description?: string;
    /** Capacity in GB; written on the wire as a string. */
    storageCapacity?: number | string;
    /** Default mount path in containers. */
    mountPath?: string;
  };
}

/** Converts a subscription request to its wire body (capacity as a string). */
export function toSubscribeNasBody(req: SubscribeNasRequest): SubscribeNasBody {
  const body: SubscribeNasBody = { productCode: req.productCode };
  const p = req.storageParams;
  if (p) {
    body.storageParams = {};
    if (p.name !== undefined) body.storageParams.name = p.name;
    if (p.description !== undefined) body.storageParams.description = p.description;
    if (p.storageCapacity !== undefined)
      body.storageParams.storageCapacity = String(p.storageCapacity);
    if (p.mountPath !== undefined) body.storageParams.mountPath = p.mountPath;
  }
  return body;
}

/** Body of POST /v1/nasStorage/instance/{id}/scale on the wire. */
export const scaleNasBodySchema = z.object({
  id: z.string().min(1),
  scaleType: lenientEnum(SCALE_TYPES),
  capacity: z.int().positive("capacity is the GB added or removed and must be at least 1"),
});

/** A capacity change: the amount added or removed in GB, not the target total. */
export interface ScaleNasRequest {
  scaleType: ScaleType;
  /** GB to add (ScaleUp) or remove (ScaleDown); a positive integer. */
  capacity: number;
}

/** Body of PUT /v1/nasStorage/instance/{id}/mountPath on the wire. */
export const updateNasMountPathBodySchema = z.object({
  mountPath: z.string().regex(MOUNT_PATH_PATTERN, "mountPath must match ^[a-zA-Z0-9_/]{2,64}$"),
});

/** Query of the NAS list (an operation the spec does not name). */
export interface NasListQuery {
  pageNo?: number;
  pageSize?: number;
  name?: string;
  status?: string;
  aidcId?: number;
}

/** A NAS storage product. */
export const nasProductSchema = z.object({
  name: z.preprocess((v) => (v === null ? undefined : v), z.string()),
  aidcId: optionalInt,
  productCode: optionalString,
  resourceTypeCode: optionalString,
  resourceSpecParamCode: optionalString,
  /** Default capacity (GB, as text). */
  paramValue: optionalString,
  paramUnit: optionalInt,
  /** Lower capacity bound in GB; absent means none. */
  paramValueMin: optionalInt,
  /** Upper capacity bound in GB; absent means none. */
  paramValueMax: optionalInt,
  price: optionalString,
  priceUnit: optionalInt,
  currencyUnitOfMeasure: optionalInt,
  currencyUnitPriceFormula: optionalString,
});

/** A NAS storage product. */
export type NasProduct = z.infer<typeof nasProductSchema>;

/**
 * Body of POST /v1/product/nas-storage-available: aidcId or aidcCode, and the spec code
 * (the capacity rule of a NAS product: controllers/nasvolume/decisions.ts).
 */
export const nasAvailabilityBodySchema = z
  .object({
    aidcCode: z.string().min(1).optional(),
    aidcId: z.int().optional(),
    resourceSpecCode: z.string().min(1),
  })
  .refine((b) => b.aidcCode !== undefined || b.aidcId !== undefined, {
    message: "one of aidcId or aidcCode identifies the compute center",
  });

/** Which NAS product to check: the compute center by id or code, and the product's code. */
export type NasAvailabilityQuery = z.infer<typeof nasAvailabilityBodySchema>;

/** The availability answer: a boolean, also read from "true"/"false". */
export const nasAvailabilitySchema = z.preprocess(
  (v) => (v === "true" ? true : v === "false" ? false : v),
  z.boolean(),
);
