import { describe, expect, it } from "vitest";
import {
  type Condition,
  CUT_MARK,
  capEnvName,
  capFreeText,
  capText,
  capValue,
  getCondition,
  isConditionTrue,
  MAX_CONDITION_MESSAGE_CHARS,
  setCondition,
} from "./object-writes.js";
import { jsonEqual, mergePatch, toJson, withoutNulls } from "./resource.js";

const t0 = new Date("2026-01-01T00:00:00.000Z");
const t1 = new Date("2026-01-01T01:00:00.000Z");

describe("setCondition", () => {
  it("cuts a message longer than the bound, ending in …, and keeps one of the bound's length", () => {
    const set = (message: string) =>
      setCondition(undefined, { type: "Ready", status: "False", reason: "R", message }, 1, t0)[0]
        ?.message;
    const atBound = "m".repeat(MAX_CONDITION_MESSAGE_CHARS);
    expect(set(atBound)).toBe(atBound);
    expect(set(`${atBound}more`)).toBe(`${"m".repeat(MAX_CONDITION_MESSAGE_CHARS - 1)}…`);
  });

  it("adds a new condition with the current time and the generation", () => {
    const out = setCondition(
      undefined,
      { type: "Ready", status: "False", reason: "Creating", message: "ordered" },
      3,
      t0,
    );
    expect(out).toEqual([
      {
        type: "Ready",
        status: "False",
        reason: "Creating",
        message: "ordered",
        lastTransitionTime: "2026-01-01T00:00:00Z",
        observedGeneration: 3,
      },
    ]);
  });

  it("keeps lastTransitionTime when the status did not change, but updates reason, message and generation", () => {
    const before = setCondition(
      [],
      { type: "Ready", status: "False", reason: "Creating", message: "a" },
      1,
      t0,
    );
    const after = setCondition(
      before,
      { type: "Ready", status: "False", reason: "Pending", message: "b" },
      2,
      t1,
    );
    expect(after[0]).toMatchObject({
      reason: "Pending",
      message: "b",
      observedGeneration: 2,
      lastTransitionTime: "2026-01-01T00:00:00Z",
    });
  });

  it("moves lastTransitionTime when the status changes, and keeps other conditions in place", () => {
    const start: Condition[] = [
      { type: "Synced", status: "True", reason: "Ok", message: "", lastTransitionTime: "x" },
      { type: "Ready", status: "False", reason: "Creating", message: "", lastTransitionTime: "y" },
    ];
    const out = setCondition(
      Object.freeze(start),
      { type: "Ready", status: "True", reason: "Running", message: "" },
      1,
      t1,
    );
    expect(out.map((c) => c.type)).toEqual(["Synced", "Ready"]);
    expect(getCondition(out, "Ready")?.lastTransitionTime).toBe("2026-01-01T01:00:00Z");
    expect(getCondition(out, "Synced")?.lastTransitionTime).toBe("x");
    expect(isConditionTrue(out, "Ready")).toBe(true);
    expect(start[1]?.status).toBe("False");
  });
});

describe("JSON comparison and merge patches", () => {
  it("treats key order as irrelevant and array order as relevant", () => {
    expect(jsonEqual({ a: 1, b: [1, 2] }, { b: [1, 2], a: 1 })).toBe(true);
    expect(jsonEqual({ b: [2, 1] }, { b: [1, 2] })).toBe(false);
  });

  it("writes a patch that sets changed fields and nulls vanished ones, recursively", () => {
    const from = toJson({ phase: "A", nested: { x: 1, y: 2 }, list: [1], gone: "z" });
    const to = toJson({ phase: "B", nested: { x: 1 }, list: [1, 2] });
    expect(mergePatch(from, to)).toEqual({
      gone: null,
      phase: "B",
      nested: { y: null },
      list: [1, 2],
    });
    expect(mergePatch(to, to)).toBeUndefined();
  });

  it("counts undefined and null fields as absent", () => {
    expect(withoutNulls(toJson({ a: undefined, b: null, c: { d: null } }))).toEqual({ c: {} });
  });
});

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
