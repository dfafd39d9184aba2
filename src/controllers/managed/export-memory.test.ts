import { describe, expect, it } from "vitest";
import { ExportMemory } from "./export-memory.js";

describe("ExportMemory", () => {
  it("makes a written export due a read back only after recheckMs, or when a reconcile asks", () => {
    let now = 0;
    const memory = new ExportMemory(10_000, () => now);
    const written = { name: "cm", data: { A: "1" } };
    expect(memory.due("uid-1")).toBe(true);
    memory.record("uid-1", written);
    expect(memory.same("uid-1", written)).toBe(true);
    // Just written: seen as written.
    now = 9_999;
    expect(memory.due("uid-1")).toBe(false);
    now = 10_000;
    expect(memory.due("uid-1")).toBe(true);
    memory.seen("uid-1");
    now = 15_000;
    expect(memory.due("uid-1")).toBe(false);
    // A requested reconcile reads both of the object's exports back at once.
    memory.record("uid-1/secret", { name: "s", data: {} });
    memory.recheck("uid-1");
    expect(memory.due("uid-1")).toBe(true);
    expect(memory.due("uid-1/secret")).toBe(true);
    memory.forget("uid-1");
    expect(memory.same("uid-1", written)).toBe(false);
    expect(memory.same("uid-1/secret", { name: "s", data: {} })).toBe(false);
  });
});
