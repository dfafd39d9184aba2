import { describe, expect, it } from "vitest";
import { checkNasCapacity } from "./nas-capacity.js";
import type { NasProduct } from "./schemas/nas.js";

const product = (p: Partial<NasProduct>): NasProduct => ({ name: "n", productCode: "nas.x", ...p });

describe("checkNasCapacity", () => {
  it.each([
    {
      reason: "within both bounds",
      p: { paramValueMin: 100, paramValueMax: 1000 },
      gb: 500,
      ok: true,
    },
    {
      reason: "on the lower bound",
      p: { paramValueMin: 100, paramValueMax: 1000 },
      gb: 100,
      ok: true,
    },
    {
      reason: "below the minimum",
      p: { paramValueMin: 100, paramValueMax: 1000 },
      gb: 99,
      ok: false,
    },
    {
      reason: "above the maximum",
      p: { paramValueMin: 100, paramValueMax: 1000 },
      gb: 1001,
      ok: false,
    },
    { reason: "only a minimum: no upper limit", p: { paramValueMin: 500 }, gb: 100_000, ok: true },
    { reason: "only a maximum: no lower limit", p: { paramValueMax: 50 }, gb: 1, ok: true },
    { reason: "no bounds: the default is allowed", p: { paramValue: "200" }, gb: 200, ok: true },
    { reason: "no bounds: anything else is not", p: { paramValue: "200" }, gb: 300, ok: false },
    { reason: "no bounds and no default: anything", p: {}, gb: 7, ok: true },
    { reason: "a fraction of a GB", p: {}, gb: 1.5, ok: false },
    { reason: "zero", p: {}, gb: 0, ok: false },
  ])("$reason", ({ p, gb, ok }) => {
    expect(checkNasCapacity(product(p), gb).ok).toBe(ok);
  });

  it("says why, naming the product and the bound", () => {
    const v = checkNasCapacity(product({ paramValueMin: 100, paramValueMax: 1000 }), 5000);
    expect(v).toEqual({
      ok: false,
      reason: "capacity 5000 GB is above the maximum of 1000 GB of NAS product nas.x",
    });
  });
});
