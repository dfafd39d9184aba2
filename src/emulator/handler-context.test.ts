import { describe, expect, it } from "vitest";
import {
  type HandlerContext,
  inListOrder,
  recordOfPathId,
  UnknownIdRefusal,
} from "./handler-context.js";
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

describe("inListOrder", () => {
  // As made: tasks and NAS carry their name, a template in its wire fields.
  const made = [{ name: "b" }, { fields: { name: "a" } }, { name: "c" }, { name: "a" }];

  it("lists as made, newest first, or by name with one name's records as made", () => {
    expect(inListOrder(made, "oldestFirst")).toBe(made);
    expect(inListOrder(made, "newestFirst")).toEqual([...made].reverse());
    expect(inListOrder(made, "byName")).toEqual([made[1], made[3], made[0], made[2]]);
    expect(made[0]).toEqual({ name: "b" });
  });
});
