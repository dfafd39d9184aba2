import { describe, expect, it } from "vitest";
import { type CatalogCode, closestCodes, closestCodesText } from "./closest-codes.js";

describe("closestCodes", () => {
  const catalog: CatalogCode[] = [
    { code: "train.gpu.h100.8", aidcId: 2 },
    { code: "train.gpu.a100.8", aidcId: 1 },
    { code: "train.gpu.a100.4", aidcId: 1 },
    { code: "train.cpu.16", aidcId: 1 },
    { code: "train.gpu.a100.8", aidcId: 2 },
  ];
  const cases: {
    reason: string;
    given: string;
    aidcId?: number;
    limit?: number;
    want: { closest: string[]; others: number };
  }[] = [
    {
      reason: "ranks by distance, each code once",
      given: "train.gpu.a100.2",
      want: {
        closest: ["train.gpu.a100.4", "train.gpu.a100.8", "train.gpu.h100.8", "train.cpu.16"],
        others: 0,
      },
    },
    {
      reason: "puts the codes of the given compute center first",
      given: "train.gpu.h100.2",
      aidcId: 1,
      limit: 2,
      want: { closest: ["train.gpu.a100.4", "train.gpu.a100.8"], others: 2 },
    },
    {
      reason:
        "counts a code offered in the center as the center's even when listed elsewhere first",
      given: "train.gpu.a100.8",
      aidcId: 2,
      limit: 2,
      want: { closest: ["train.gpu.a100.8", "train.gpu.h100.8"], others: 2 },
    },
    {
      reason: "ignores case when measuring",
      given: "TRAIN.CPU.16",
      limit: 1,
      want: { closest: ["train.cpu.16"], others: 3 },
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      expect(closestCodes(c.given, catalog, c.aidcId, c.limit)).toEqual(c.want);
    });
  }

  it("names nothing for an empty catalog", () => {
    expect(closestCodes("train.cpu.16", [])).toEqual({ closest: [], others: 0 });
  });

  it("names five codes of a large catalog by default", () => {
    const big = Array.from({ length: 1000 }, (_, i) => ({ code: `code-${i}` }));
    const found = closestCodes("code-42", big);
    expect(found.closest[0]).toBe("code-42");
    expect(found.closest).toHaveLength(5);
    expect(found.others).toBe(995);
  });
});

describe("closestCodesText", () => {
  it("names the codes, the others' count and the listing command", () => {
    expect(closestCodesText({ closest: ["a", "b"], others: 3 }, "kubectl get nasproducts")).toBe(
      "closest: a, b (and 3 more); list them with kubectl get nasproducts",
    );
  });

  it("leaves out the count when no code is left out", () => {
    expect(closestCodesText({ closest: ["a"], others: 0 }, "kubectl get x")).toBe(
      "closest: a; list them with kubectl get x",
    );
  });

  it("says the catalog lists no product when it is empty", () => {
    expect(closestCodesText({ closest: [], others: 0 }, "kubectl get x")).toBe(
      "the catalog lists no product",
    );
  });
});
