import { describe, expect, it } from "vitest";
import { CUT_MARK, capEnvName, capFreeText, capText, capValue } from "./status-bounds.js";

describe("capText", () => {
  const cases: {
    reason: string;
    value: string | undefined;
    max: number;
    want: string | undefined;
  }[] = [
    { reason: "keeps undefined", value: undefined, max: 4, want: undefined },
    { reason: "keeps a string of the bound's length", value: "abcd", max: 4, want: "abcd" },
    {
      reason: "cuts a longer one to the bound, ending in the mark",
      value: "abcde",
      max: 4,
      want: `abc${CUT_MARK}`,
    },
    {
      reason: "never splits a surrogate pair",
      value: "ab😀cd",
      max: 4,
      want: `ab${CUT_MARK}`,
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      const got = capText(c.value, c.max);
      expect(got).toBe(c.want);
      if (got !== undefined) expect(got.length).toBeLessThanOrEqual(c.max);
    });
  }
});

describe("the status bounds", () => {
  const cases: { reason: string; cap: (v: string) => string; max: number }[] = [
    { reason: "a short value is cut at 256 characters", cap: capValue, max: 256 },
    { reason: "an env name is cut at 128 characters", cap: capEnvName, max: 128 },
    { reason: "a free text is cut at 1024 characters", cap: capFreeText, max: 1024 },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      expect(c.cap("x".repeat(c.max))).toBe("x".repeat(c.max));
      expect(c.cap("x".repeat(c.max + 1))).toHaveLength(c.max);
    });
  }
});
