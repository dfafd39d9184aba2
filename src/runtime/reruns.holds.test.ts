import { describe, expect, it } from "vitest";
import { TerminalHolds } from "./reruns.js";
import type { KubeObject } from "./resource.js";

/** The terminal holds of a controller's keys (which changes release them, the slow retry). */

function object(generation: number, labels: Record<string, string> = {}, phase = "Failed") {
  return {
    metadata: { namespace: "ml", name: "vol", generation, labels },
    status: { phase },
  } as KubeObject;
}

describe("TerminalHolds", () => {
  it("holds a key until its object changes in a part a reconcile acts on", () => {
    const holds = new TerminalHolds();
    expect(holds.hold("ml/vol", object(1), false)).toBeUndefined();
    expect(holds.keys()).toEqual(["ml/vol"]);
    expect(holds.holdsUnchanged("ml/vol", object(1, {}, "Other"))).toBe(true);
    expect(holds.holdsUnchanged("ml/vol", object(2))).toBe(false);
    expect(holds.holdsUnchanged("ml/vol", object(1, { a: "b" }))).toBe(false);
    holds.release("ml/vol");
    expect(holds.has("ml/vol")).toBe(false);
  });

  it("holds nothing for an object that is gone", () => {
    const holds = new TerminalHolds();
    holds.hold("ml/vol", undefined, false);
    expect(holds.keys()).toEqual([]);
  });

  it("retries an external hold on a slow doubling backoff, reset by a success", () => {
    const holds = new TerminalHolds({ baseMs: 1000, maxMs: 3000 });
    expect(holds.hold("ml/vol", object(1), true)).toBe(1000);
    expect(holds.hold("ml/vol", object(1), true)).toBe(2000);
    expect(holds.hold("ml/vol", object(1), true)).toBe(3000);
    // A release (the object changed) keeps the backoff; a success resets it.
    holds.release("ml/vol");
    expect(holds.hold("ml/vol", object(1), true)).toBe(3000);
    holds.succeeded("ml/vol");
    expect(holds.has("ml/vol")).toBe(false);
    expect(holds.hold("ml/vol", object(1), true)).toBe(1000);
  });

  it("defaults to 15 s for the first retry of an external hold", () => {
    expect(new TerminalHolds().hold("ml/vol", object(1), true)).toBe(15_000);
  });

  it("resets the backoff when the hold turns out not to be external", () => {
    const holds = new TerminalHolds({ baseMs: 1000, maxMs: 60_000 });
    holds.hold("ml/vol", object(1), true);
    holds.hold("ml/vol", object(1), false);
    expect(holds.hold("ml/vol", object(1), true)).toBe(1000);
  });

  it("clear releases every key and resets the backoff of the keys given", () => {
    const holds = new TerminalHolds({ baseMs: 1000, maxMs: 60_000 });
    holds.hold("ml/a", object(1), true);
    holds.hold("ml/b", object(1), true);
    holds.clear(["ml/a"]);
    expect(holds.keys()).toEqual([]);
    expect(holds.hold("ml/a", object(1), true)).toBe(1000);
    expect(holds.hold("ml/b", object(1), true)).toBe(2000);
  });
});
