import { describe, expect, it } from "vitest";
import { type HandlerContext, recordOfPathId, UnknownIdRefusal } from "./handler-context.js";

const ctx = (id?: string) =>
  ({ params: id === undefined ? {} : { id } }) as unknown as HandlerContext;

describe("recordOfPathId", () => {
  const records = new Map([["t-1", { name: "one" }]]);

  it("answers the record the path's id names", () => {
    expect(recordOfPathId(ctx("t-1"), records, "training task")).toEqual({ name: "one" });
  });

  it("refuses an unknown or missing id with a 404 naming what was looked for", () => {
    for (const id of ["t-2", undefined]) {
      const err = (() => {
        try {
          recordOfPathId(ctx(id), records, "training task");
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(UnknownIdRefusal);
      expect(err).toMatchObject({ status: 404, message: `training task ${id ?? ""} not found` });
    }
  });
});
