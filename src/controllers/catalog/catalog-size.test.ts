/**
 * The catalog objects stay within their CRDs' limits and bounded whatever the catalog
 * answer holds: strings cut at the spec fields' maxLength, integers beyond the kinds'
 * bound left out, at most 32 `ext` entries, and a product whose code is too long to
 * hold whole left out (a cut code would name another product).
 */
import { describe, expect, it } from "vitest";
import {
  jsonBytes,
  kibibytes,
  long,
  range,
  STATUS_BOUNDS_KIB,
} from "../../../test/support/status-size.js";
import { NasProductSpec, TrainingProductSpec } from "../../crds/index.js";
import type { NasProduct, TrainingProduct } from "../../service/index.js";
import { nasProductObjects, trainingProductObjects } from "./mirror.js";

describe("the catalog objects' size, from the largest catalog answer", () => {
  const productCode = "c".repeat(256);

  it(`keeps a TrainingProduct under ${STATUS_BOUNDS_KIB.TrainingProduct} KiB and within its CRD's limits`, () => {
    const product: TrainingProduct = {
      name: long("n"),
      aidcId: 1,
      productCode,
      cpuCores: long("c"),
      memoryGB: long("m"),
      gpuName: long("g"),
      gpuCount: long("g"),
      diskGB: long("d"),
      price: long("9"),
      priceUnit: 2 ** 40,
      remainingCount: 2 ** 40,
      ext: Object.fromEntries(range(100).map((i) => [`${i}${long("k")}`, long("v")])),
    };
    const [object] = trainingProductObjects("team-a", [product]);
    expect(() => TrainingProductSpec.parse(object?.spec)).not.toThrow();
    expect(Object.keys(object?.spec.ext as object)).toHaveLength(32);
    expect(object?.spec.remainingCount).toBeUndefined();
    expect(object?.spec.displayName).toHaveLength(256);
    expect(jsonBytes(object)).toBeLessThan(kibibytes(STATUS_BOUNDS_KIB.TrainingProduct));
  });

  it(`keeps a NasProduct under ${STATUS_BOUNDS_KIB.NasProduct} KiB and within its CRD's limits`, () => {
    const product: NasProduct = {
      name: long("n"),
      aidcId: 1,
      productCode,
      resourceTypeCode: long("r"),
      resourceSpecParamCode: long("s"),
      paramValue: long("1"),
      paramUnit: 2 ** 40,
      paramValueMin: 2 ** 40,
      paramValueMax: 2 ** 40,
      price: long("9"),
      priceUnit: 2 ** 40,
      currencyUnitOfMeasure: 2 ** 40,
      currencyUnitPriceFormula: long("f"),
    };
    const [object] = nasProductObjects("team-a", [product], new Map());
    expect(() => NasProductSpec.parse(object?.spec)).not.toThrow();
    expect(jsonBytes(object)).toBeLessThan(kibibytes(STATUS_BOUNDS_KIB.NasProduct));
  });

  it("leaves out a product whose code is longer than a catalog object holds", () => {
    const code = "c".repeat(257);
    expect(trainingProductObjects(undefined, [{ name: "n", productCode: code }])).toEqual([]);
    expect(nasProductObjects(undefined, [{ name: "n", productCode: code }], new Map())).toEqual([]);
  });
});
