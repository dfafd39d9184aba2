/**
 * NAS storage as the service holds it: the instance record (also the item of a task's
 * storages), the NAS products of the catalog and the availability answer. What the
 * NAS operations send (their request bodies) is declared beside them, in
 * kinds/nasvolume.ts.
 */
import { z } from "zod";
import {
  idString,
  optionalBoolean,
  optionalInt,
  optionalObject,
  optionalString,
  optionalTimestamp,
  responseEnum,
} from "./primitives.js";

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

/** The availability answer: a boolean, also read as the text "true" or "false". */
export const nasAvailabilitySchema = z.preprocess(
  (v) => (v === "true" ? true : v === "false" ? false : v),
  z.boolean(),
);
