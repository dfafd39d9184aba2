/**
 * The emulator's time shapes: every time of an answer rewritten as the same instant, in
 * epoch milliseconds or with a +08:00 offset; other values left as they are.
 */
import { describe, expect, it } from "vitest";
import { normalizeTimestamp } from "../service/schemas/primitives.js";
import { timesAs } from "./time-formats.js";

describe("time formats", () => {
  const answer = {
    createdTime: "2026-01-02 20:04:05",
    lastUpdateTime: "2026-01-02T20:04:05.123Z",
    startTime: "",
    name: "job 2026",
    records: [{ createTime: "2026-01-02 20:04:05", quota: "100" }],
  };

  it("leaves the answer as shown by default", () => {
    expect(timesAs("asShown", answer)).toBe(answer);
  });

  it("writes epoch milliseconds as numbers", () => {
    expect(timesAs("epochMillis", answer)).toEqual({
      ...answer,
      createdTime: Date.UTC(2026, 0, 2, 20, 4, 5),
      lastUpdateTime: Date.UTC(2026, 0, 2, 20, 4, 5, 123),
      records: [{ createTime: Date.UTC(2026, 0, 2, 20, 4, 5), quota: "100" }],
    });
  });

  it("writes the local time at +08:00, the same instant", () => {
    const out = timesAs("offset", answer) as typeof answer;
    expect(out.createdTime).toBe("2026-01-03T04:04:05+08:00");
    expect(out.startTime).toBe("");
    expect(normalizeTimestamp(out.createdTime)).toBe("2026-01-02T20:04:05Z");
    expect(normalizeTimestamp(out.lastUpdateTime)).toBe("2026-01-02T20:04:05Z");
  });
});
