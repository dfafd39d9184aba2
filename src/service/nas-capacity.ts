/**
 * The operator's reading of the capacity rule of a NAS product (the spec's NAS product
 * fields and Limits), checked before a subscription or a scale is sent. The emulator
 * reads the spec on its own (src/emulator/kinds/nasvolume.capacity.ts).
 */
import type { NasProduct } from "./schemas/nas.js";

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
