import { describe, expect, it } from "vitest";
import {
  decideAfterLookup,
  type LookupInput,
  rememberAnswered,
  takeAnswered,
} from "./create-recovery.js";
import { ANNOTATIONS, type CreateState, formatPending, readCreateState } from "./decisions.js";
import { nextCreateStep } from "./reconciler.js";

const pending = { token: "tok-1", at: "2026-11-22T10:00:00Z", generation: 1 };

describe("readCreateState", () => {
  it("reads every annotation of the protocol", () => {
    const state = readCreateState({
      [ANNOTATIONS.externalId]: "nas-1",
      [ANNOTATIONS.subscriptionKey]: "key-1",
      [ANNOTATIONS.createPending]: formatPending(pending),
      [ANNOTATIONS.createFailedGeneration]: "2",
    });
    expect(state).toEqual({
      externalId: "nas-1",
      subscriptionKey: "key-1",
      pending,
      failedGeneration: 2,
    });
  });

  it("treats a malformed pending marker as pending with no token, never as absent", () => {
    const state = readCreateState({ [ANNOTATIONS.createPending]: "{not json" });
    expect(state.pending).toEqual({ token: "", at: "", generation: 0 });
  });

  it("ignores blank ids and keys", () => {
    expect(readCreateState({ [ANNOTATIONS.externalId]: "  " })).toEqual({});
  });
});

describe("nextCreateStep", () => {
  const cases: { reason: string; state: CreateState; generation: number; want: string }[] = [
    { reason: "nothing recorded creates", state: {}, generation: 1, want: "Create" },
    {
      reason: "a known id is observed",
      state: { externalId: "x", subscriptionKey: "k", pending },
      generation: 1,
      want: "Observe",
    },
    {
      reason: "a key without id is polled",
      state: { subscriptionKey: "k", pending },
      generation: 1,
      want: "PollSubscription",
    },
    {
      reason: "a pending marker without key is looked up, never re-created",
      state: { pending },
      generation: 1,
      want: "LookupByToken",
    },
    {
      reason: "a failed create of this generation waits for a spec change",
      state: { failedGeneration: 3 },
      generation: 3,
      want: "WaitForSpecChange",
    },
    {
      reason: "a newer generation after a failure tries again",
      state: { failedGeneration: 3 },
      generation: 4,
      want: "Create",
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      expect(nextCreateStep(c.state, c.generation).step).toBe(c.want);
    });
  }
});

describe("decideAfterLookup", () => {
  const base: LookupInput = {
    token: "tok-1",
    found: [],
    pendingAgeMs: 0,
    inFlightMs: 0,
    visibilityGraceMs: 30_000,
  };
  const cases: { reason: string; input: Partial<LookupInput>; want: string }[] = [
    { reason: "exactly one match is adopted", input: { found: ["t-1"] }, want: "Adopt" },
    {
      reason: "several matches cannot be decided",
      input: { found: ["t-1", "t-2"] },
      want: "Unknown",
    },
    {
      reason: "no lookup operation cannot be decided",
      input: { found: undefined },
      want: "Unknown",
    },
    {
      reason: "a malformed marker cannot be decided",
      input: { token: "", found: [] },
      want: "Unknown",
    },
    {
      reason: "a marker without a valid time cannot be decided",
      input: { pendingAgeMs: Number.NaN },
      want: "Unknown",
    },
    {
      reason: "no match within the visibility grace waits",
      input: { found: [], pendingAgeMs: 5_000 },
      want: "Wait",
    },
    {
      reason: "no match after the window stops: the create is never sent again by itself",
      input: { found: [], pendingAgeMs: 31_000 },
      want: "Unknown",
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      expect(decideAfterLookup({ ...base, ...c.input }).decision).toBe(c.want);
    });
  }

  it("adopts the one id it found", () => {
    expect(decideAfterLookup({ ...base, found: ["t-9"] })).toEqual({
      decision: "Adopt",
      externalId: "t-9",
    });
  });

  it("looks again after half the marker's age, between 1 s and 30 s, and at the window's end", () => {
    const wait = (pendingAgeMs: number, visibilityGraceMs = 600_000) =>
      decideAfterLookup({ ...base, pendingAgeMs, visibilityGraceMs });
    expect(wait(200)).toEqual({ decision: "Wait", requeueAfterMs: 1_000 });
    expect(wait(9_700)).toEqual({ decision: "Wait", requeueAfterMs: 4_850 });
    expect(wait(120_000)).toEqual({ decision: "Wait", requeueAfterMs: 30_000 });
    expect(wait(595_000)).toEqual({ decision: "Wait", requeueAfterMs: 5_000 });
  });

  it("names what the kind looks its resource up by: the client token, or what it declares", () => {
    const several = (key?: LookupInput["key"]) =>
      decideAfterLookup({ ...base, found: ["t-1", "t-2"], ...(key ? { key } : {}) });
    expect(several()).toMatchObject({
      message: expect.stringMatching(
        /^2 remote resources carry this object's client token "tok-1" \(t-1, t-2\)/,
      ),
    });
    const byName = { what: "template name", value: "nightly" };
    expect(several(byName)).toMatchObject({
      message: expect.stringMatching(
        /^2 remote resources carry this object's template name "nightly"/,
      ),
    });
    const none = decideAfterLookup({ ...base, key: byName, pendingAgeMs: 60_000 });
    expect(none.decision === "Unknown" && none.message).toMatch(
      /no remote resource with its template name "nightly" was listed/,
    );
    const noList = decideAfterLookup({ ...base, key: byName, found: undefined });
    expect(noList.decision === "Unknown" && noList.message).toMatch(/by its template name$/);
    for (const d of [several(byName), none, noList]) {
      expect(d.decision === "Unknown" && d.message).not.toMatch(/client token/);
    }
  });

  it("names the token and the window when it stops", () => {
    const d = decideAfterLookup({ ...base, pendingAgeMs: 600_000, visibilityGraceMs: 600_000 });
    expect(d.decision).toBe("Unknown");
    expect(d.decision === "Unknown" && d.message).toMatch(
      /"tok-1" was listed within the visibility window \(600 s, service.listVisibilityWindowMs\)/,
    );
  });
});

describe("creates that answered without an id", () => {
  it("are remembered once, for the object that sent them", () => {
    rememberAnswered("uid-1", "tok-a");
    expect(takeAnswered("uid-2", "tok-a")).toBe(false);
    expect(takeAnswered("uid-1", "tok-a")).toBe(true);
    expect(takeAnswered("uid-1", "tok-a")).toBe(false);
  });
});
