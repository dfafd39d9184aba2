/**
 * Product catalogs: training resource specifications and NAS storage products, and the
 * availability check body (the capacity rule of a NAS product: ../nas-capacity.ts).
 */
import { z } from "zod";
import { optionalInt, optionalString, optionalStringMap } from "./primitives.js";

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

/** Body of POST /v1/product/nas-storage-available: aidcId or aidcCode, and the spec code. */
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
