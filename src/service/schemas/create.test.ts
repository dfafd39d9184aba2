import { describe, expect, it } from "vitest";
import {
  clientTokenInDescription,
  stripClientTokenMarker,
  subscriptionKeySchema,
  subscriptionResultSchema,
  withClientTokenMarker,
} from "./create.js";

describe("client token markers in NAS descriptions", () => {
  it("appends the marker to a description and reads the token back", () => {
    const d = withClientTokenMarker("training data", "tok-1");
    expect(d).toBe("training data [aidc-token:tok-1]");
    expect(clientTokenInDescription(d)).toBe("tok-1");
  });

  it("replaces an earlier marker instead of adding a second one", () => {
    const d = withClientTokenMarker(withClientTokenMarker("data", "old"), "new");
    expect(d).toBe("data [aidc-token:new]");
  });

  it("gives the description without the marker for people", () => {
    expect(stripClientTokenMarker("data [aidc-token:x]")).toBe("data");
    expect(withClientTokenMarker(undefined, "t")).toBe("[aidc-token:t]");
  });

  it("finds no token in a description without a marker", () => {
    expect(clientTokenInDescription("plain")).toBeUndefined();
    expect(clientTokenInDescription(undefined)).toBeUndefined();
  });
});

const parse = (data: unknown) => subscriptionResultSchema("key-1").safeParse(data);

describe("the subscription result", () => {
  it.each([
    [
      "the canonical shape",
      { key: "key-1", state: "Succeeded", instanceId: "nas-1" },
      { state: "Succeeded", instanceId: "nas-1" },
    ],
    [
      "a status word in upper case",
      { status: "SUCCESS", resourceId: "t-9" },
      { state: "Succeeded", instanceId: "t-9" },
    ],
    ["a pending word", { orderStatus: "processing" }, { state: "Pending" }],
    [
      "a failure with a reason",
      { status: "FAILED", failReason: "no stock" },
      { state: "Failed", message: "no stock" },
    ],
    ["a bare state word", "in_progress", { state: "Pending" }],
    [
      "a success flag",
      { success: true, instanceIds: ["x-1", "x-2"] },
      { state: "Succeeded", instanceId: "x-1" },
    ],
    [
      "a nested result object",
      { status: "done", result: { taskId: "t-1" } },
      { state: "Succeeded", instanceId: "t-1" },
    ],
    ["null (no record yet)", null, { state: "Pending", empty: true }],
    ["an empty object (no record yet)", {}, { state: "Pending", empty: true }],
  ])("reads %s", (_reason, data, expected) => {
    const r = parse(data);
    expect(r.success).toBe(true);
    expect(r.data).toMatchObject({ key: "key-1", ...expected });
  });

  it("does not take a bare id for the instance id (it may be the record's own id)", () => {
    expect(parse({ id: "rec-1", status: "success" }).data?.instanceId).toBeUndefined();
  });

  it("refuses an unknown state word instead of guessing, naming it", () => {
    const r = parse({ status: "HALF_DONE" });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.message).toMatch(/unknown subscription state "HALF_DONE"/);
  });

  it("refuses an object without any state", () => {
    expect(parse({ instanceId: "x" }).success).toBe(false);
  });
});

describe("the subscription result with a configured mapping", () => {
  const integer = { states: { "1": "Pending", "2": "Succeeded", "3": "Failed" } } as const;

  it.each([
    ["an integer status", integer, { status: 2, instanceId: "nas-1" }, { state: "Succeeded" }],
    ["an integer pending status", integer, { status: 1 }, { state: "Pending" }],
    ["a bare integer", integer, 3, { state: "Failed" }],
    [
      "renamed fields",
      { stateField: "orderState", instanceIdField: "createdResourceId", messageField: "remark" },
      { orderKey: "key-1", orderState: "FAILED", remark: "sold out" },
      { state: "Failed", message: "sold out" },
    ],
    [
      "a renamed id field",
      { stateField: "orderState", instanceIdField: "createdResourceId" },
      { orderState: "DONE", createdResourceId: "t-7" },
      { state: "Succeeded", instanceId: "t-7" },
    ],
    [
      "a mapped word over the built-in ones",
      { states: { done: "Pending" } },
      { status: "DONE" },
      { state: "Pending" },
    ],
  ] as const)("reads %s", (_reason, mapping, data, expected) => {
    const r = subscriptionResultSchema("key-1", mapping).safeParse(data);
    expect(r.success).toBe(true);
    expect(r.data).toMatchObject({ key: "key-1", ...expected });
  });

  it("names service.subscriptionResult.states for a state it cannot map", () => {
    const r = parse({ status: 2 });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.message).toMatch(
      /unknown subscription state "2".*service\.subscriptionResult\.states/,
    );
  });

  it("names service.subscriptionResult.stateField when no field holds a state", () => {
    const r = parse({ orderKey: "key-1", orderState: "DONE" });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.message).toMatch(
      /orderState.*service\.subscriptionResult\.stateField/,
    );
  });
});

describe("the create answer's subscription key", () => {
  it.each([
    ["sub-1", "sub-1"],
    [123456789012345, "123456789012345"],
    [{ subscriptionKey: "sub-1" }, "sub-1"],
    [{ key: "sub-1" }, "sub-1"],
    [{ orderId: 42 }, "42"],
    [{ subscriptionKey: "sub-1", instanceId: "task-1" }, "sub-1"],
    [{ result: { resultKey: "sub-1" } }, "sub-1"],
  ])("reads %j as %s", (data, key) => {
    expect(subscriptionKeySchema().parse(data)).toBe(key);
  });

  it("reads the configured keyField first", () => {
    const schema = subscriptionKeySchema({ keyField: "requestNo" });
    expect(schema.parse({ requestNo: "req-7", orderId: "order-1" })).toBe("req-7");
  });

  it("names service.subscriptionResult.keyField when no field holds the key", () => {
    const r = subscriptionKeySchema().safeParse({ requestNo: "req-7" });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.message).toMatch(
      /fields present: requestNo.*service\.subscriptionResult\.keyField/,
    );
  });

  it("refuses a key that is no service id", () => {
    for (const data of ["../x", { key: "a/b" }, null, true]) {
      expect(subscriptionKeySchema().safeParse(data).success, JSON.stringify(data)).toBe(false);
    }
  });
});
