import { describe, expect, it } from "vitest";
import { CONDITION_REASONS } from "../reasons.js";
import { entry, joinReasonParts } from "./entry.js";

const ok = entry("Ok", ["Ready"], "joining kinds", "fine");
const stuck = entry("Terminal", ["Synced"], "joining kinds", "stuck");

describe("joinReasonParts, the reason table from its per-area parts", () => {
  it("joins the parts into one table, in their order", () => {
    const table = joinReasonParts({ Fine: ok }, { Stuck: stuck });
    expect(Object.keys(table)).toEqual(["Fine", "Stuck"]);
    expect(table.Stuck).toBe(stuck);
  });

  it("refuses a reason in two parts (a spread would keep the last silently)", () => {
    expect(() => joinReasonParts({ Fine: ok }, { Fine: stuck })).toThrow(
      "reason Fine is in two parts of the reason table",
    );
  });

  it("keeps the table's order: the reasons every kind writes first, the deletion policy last", () => {
    const reasons = Object.keys(CONDITION_REASONS);
    expect(reasons[0]).toBe("ReconcileSuccess");
    expect(reasons.at(-1)).toBe("NoDeleteOperation");
  });
});

describe("the reason table of the registered kinds", () => {
  it("says what the user does for every Terminal or Resting reason (docs/troubleshooting.md)", async () => {
    const { REASONS } = await import("../index.js");
    const silent = REASONS.entries()
      .filter(([, e]) => (e.state === "Terminal" || e.state === "Resting") && !e.action)
      .map(([reason]) => reason);
    expect(silent).toEqual([]);
  });

  it("names no catalog kind: a read-only mirror writes no condition, paused or not", async () => {
    const { REASONS, catalogCrds } = await import("../index.js");
    const catalogs = catalogCrds.map((c) => c.kind);
    const naming = REASONS.entries().filter(([, e]) => e.kinds.some((k) => catalogs.includes(k)));
    expect(naming.map(([reason]) => reason)).toEqual([]);
    expect(REASONS.entry("ReconcilePaused")?.kinds).toContain("CciInstance");
  });
});
