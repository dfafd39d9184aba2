/**
 * The emulator's own reading of the NAS capacity rule (a part of nasvolume.ts), taken
 * from the service spec's NAS product fields and Limits: `paramValueMin` and
 * `paramValueMax` bound the capacity, an empty bound is no limit, and a product with
 * neither bound allows only its default `paramValue`. It does not share the operator's
 * reading (`nasCapacityRefusal` in src/controllers/nasvolume/decisions.ts), so a
 * misreading on either side shows as a disagreement in the tests
 * (`scripts/layer-rules.ts` keeps them apart).
 */

/** The catalog fields of a NAS product the rule reads (the wire names). */
export interface NasCapacityBounds {
  productCode?: string | undefined;
  name: string;
  /** The default capacity in GB, as text. */
  paramValue?: string | undefined;
  paramValueMin?: number | undefined;
  paramValueMax?: number | undefined;
}

/**
 * Why the service refuses `gb` GB of `product`, or undefined when it allows it. A
 * product without bounds and without a readable default allows any whole number.
 */
export function capacityRefusal(product: NasCapacityBounds, gb: number): string | undefined {
  const code = product.productCode ?? product.name;
  if (!Number.isSafeInteger(gb) || gb < 1) {
    return `capacity ${gb} GB is not a positive whole number`;
  }
  const min = product.paramValueMin;
  const max = product.paramValueMax;
  if (min === undefined && max === undefined) {
    const only = product.paramValue === undefined ? Number.NaN : Number(product.paramValue);
    if (Number.isNaN(only) || only === gb) return undefined;
    return `NAS product ${code} has no capacity bounds: only its default of ${only} GB is allowed (got ${gb} GB)`;
  }
  if (min !== undefined && gb < min) {
    return `capacity ${gb} GB is below the minimum of ${min} GB of NAS product ${code}`;
  }
  if (max !== undefined && gb > max) {
    return `capacity ${gb} GB is above the maximum of ${max} GB of NAS product ${code}`;
  }
  return undefined;
}
