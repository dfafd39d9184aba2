/**
 * Product catalogs: training resource specifications and NAS storage products, the
 * availability check body, and the capacity rule of a NAS product.
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

/** The verdict of `checkNasCapacity`. */
export type NasCapacityVerdict = { ok: true } | { ok: false; reason: string };

/**
 * Whether `capacityGB` is an allowed capacity of `product` (the spec's rule): with a
 * min and/or max bound, any integer within them (an absent bound is no limit); with
 * neither, only the default `paramValue`; with neither and no default, anything.
 */
export function checkNasCapacity(product: NasProduct, capacityGB: number): NasCapacityVerdict {
  const code = product.productCode ?? product.name;
  if (!Number.isInteger(capacityGB) || capacityGB <= 0) {
    return { ok: false, reason: `capacity ${capacityGB} GB is not a positive whole number` };
  }
  const { paramValueMin: min, paramValueMax: max } = product;
  if (min === undefined && max === undefined) {
    const fixed = Number(product.paramValue);
    if (product.paramValue === undefined || !Number.isFinite(fixed) || fixed === capacityGB) {
      return { ok: true };
    }
    return {
      ok: false,
      reason: `NAS product ${code} has no capacity bounds, so only its default of ${fixed} GB is allowed (got ${capacityGB} GB)`,
    };
  }
  if (min !== undefined && capacityGB < min) {
    return {
      ok: false,
      reason: `capacity ${capacityGB} GB is below the minimum of ${min} GB of NAS product ${code}`,
    };
  }
  if (max !== undefined && capacityGB > max) {
    return {
      ok: false,
      reason: `capacity ${capacityGB} GB is above the maximum of ${max} GB of NAS product ${code}`,
    };
  }
  return { ok: true };
}
