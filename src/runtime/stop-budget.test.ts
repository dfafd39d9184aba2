import { describe, expect, it } from "vitest";
import { StopBudget, stopShares } from "./stop-budget.js";

describe("StopBudget", () => {
  it("keeps shares for the stages after the drain: a tenth, a fifth and a twentieth, capped at 2, 5 and 1 s", () => {
    expect(stopShares(25_000)).toEqual({ events: 2_000, lease: 5_000, informers: 1_000 });
    expect(stopShares(2_000)).toEqual({ events: 200, lease: 400, informers: 100 });
  });

  it("tells what is left of the budget less a reserve, never below 0", () => {
    let now = 1_000;
    const budget = new StopBudget(25_000, () => now);
    const { events, lease, informers } = budget.shares;
    expect(budget.left(events + lease + informers)).toBe(17_000);
    now += 17_000; // the drain used its whole share
    expect(budget.left(lease + informers)).toBe(2_000);
    now += 2_000;
    expect(budget.left(informers)).toBe(5_000);
    now += 10_000; // a stage overran
    expect(budget.left()).toBe(0);
  });
});
