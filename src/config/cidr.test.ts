import { describe, expect, it } from "vitest";
import { CIDR_SHAPE, parseCidr } from "./cidr.js";

describe("CIDR_SHAPE, the form the chart's schema checks", () => {
  it("lets through every range parseCidr takes, so the chart refuses none the operator would run with", () => {
    for (const range of [
      "10.0.0.0/8",
      "203.0.113.7/32",
      "2001:db8::/32",
      "::/0",
      "::ffff:10.0.0.0/104",
      " 10.0.0.0/8 ",
    ]) {
      expect(parseCidr(range), range).toBeDefined();
      expect(range, range).toMatch(CIDR_SHAPE);
    }
  });

  it("refuses a host name, a bare address and a list in one entry", () => {
    for (const text of ["gateway.example.com/24", "10.0.0.1", "10.0.0.0/8,10.1.0.0/16", ""]) {
      expect(text, text).not.toMatch(CIDR_SHAPE);
    }
  });
});
