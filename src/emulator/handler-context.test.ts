import { describe, expect, it } from "vitest";
import { type HandlerContext, recordOfPathId, UnknownIdRefusal } from "./handler-context.js";
import { EmulatorState } from "./state.js";

const state = new EmulatorState({}, 1, () => 1_000);
const ctx = (id?: string) =>
  ({ state, params: id === undefined ? {} : { id } }) as unknown as HandlerContext;

describe("recordOfPathId", () => {
  const records = new Map([["t-1", { name: "one" }]]);

  it("answers the record the path's id names", () => {
    expect(recordOfPathId(ctx("t-1"), records, "training task")).toEqual({ name: "one" });
  });

  it("refuses an unknown or missing id, or one the service knows only later, with a 404 naming what was looked for", () => {
    const later = new Map<string, { name: string; knownAt?: number }>([
      ...records,
      ["t-3", { name: "three", knownAt: 1_001 }],
    ]);
    expect(recordOfPathId(ctx("t-1"), later, "training task")).toEqual({ name: "one" });
    for (const id of ["t-2", "t-3", undefined]) {
      const err = (() => {
        try {
          recordOfPathId(ctx(id), later, "training task");
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(UnknownIdRefusal);
      expect(err).toMatchObject({ status: 404, message: `training task ${id ?? ""} not found` });
    }
  });
});
