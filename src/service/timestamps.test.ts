import { describe, expect, it } from "vitest";
import { normalizeTimestamp, toServiceTimestamp } from "./schemas/primitives.js";

describe("normalizeTimestamp", () => {
  it.each([
    ["a zone-less service time is read as UTC", "2024-05-06 07:08:09", "2024-05-06T07:08:09Z"],
    ["an ISO time with Z keeps its instant", "2024-05-06T07:08:09Z", "2024-05-06T07:08:09Z"],
    ["fractional seconds are dropped", "2024-05-06T07:08:09.123Z", "2024-05-06T07:08:09Z"],
    ["an offset is converted to UTC", "2024-05-06T15:08:09+08:00", "2024-05-06T07:08:09Z"],
    ["a bare date is midnight UTC", "2024-05-06", "2024-05-06T00:00:00Z"],
    ["epoch milliseconds as a number", 1714979289000, "2024-05-06T07:08:09Z"],
    ["epoch milliseconds as digits", "1714979289000", "2024-05-06T07:08:09Z"],
    ["surrounding spaces are ignored", "  2024-05-06 07:08:09 ", "2024-05-06T07:08:09Z"],
  ])("%s", (_reason, input, expected) => {
    expect(normalizeTimestamp(input)).toBe(expected);
  });

  it.each([
    ["null", null],
    ["an empty string", ""],
    ["text that is not a time", "yesterday"],
    ["an impossible calendar day", "2024-02-31 10:00:00"],
    ["an object", { at: 1 }],
  ])("gives undefined for %s", (_reason, input) => {
    expect(normalizeTimestamp(input)).toBeUndefined();
  });

  it("writes times back in the service's own zone-less format", () => {
    expect(toServiceTimestamp(new Date("2024-05-06T07:08:09.5Z"))).toBe("2024-05-06 07:08:09");
  });
});
