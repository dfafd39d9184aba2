import { describe, expect, it } from "vitest";
import { editDistance } from "./edit-distance.js";

describe("editDistance", () => {
  const cases: { reason: string; a: string; b: string; want: number }[] = [
    { reason: "equal strings are 0 apart", a: "train.cpu", b: "train.cpu", want: 0 },
    { reason: "one substitution is 1", a: "train.cpu.8", b: "train.cpu.9", want: 1 },
    { reason: "one insertion is 1", a: "train.cpu", b: "train.cpus", want: 1 },
    { reason: "the empty string is as far as the other's length", a: "", b: "abc", want: 3 },
    { reason: "kitten and sitting are 3 apart", a: "kitten", b: "sitting", want: 3 },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      expect(editDistance(c.a, c.b)).toBe(c.want);
      expect(editDistance(c.b, c.a)).toBe(c.want);
    });
  }
});
