/**
 * The emulator's id shapes: numeric ids exact as JSON numbers and distinct per kind and
 * tag, written as numbers in answers and read back from numbers in requests; a create's
 * answer in each createAnswerShape.
 */
import { describe, expect, it } from "vitest";
import { startEmulatedService } from "./harness.js";
import { formatId, idsAsNumbers, idsAsText, numericId } from "./id-formats.js";

describe("id formats", () => {
  it("makes 15-digit numeric ids below 2^53, distinct per kind and tag", () => {
    const ids = [numericId("nas", "a", 1), numericId("task", "a", 1), numericId("nas", "b", 1)];
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) {
      expect(id).toMatch(/^1\d{14}$/);
      expect(Number.isSafeInteger(Number(id))).toBe(true);
    }
    expect(formatId("default", "nas", "t-", 2)).toBe("nas-t-000002");
    expect(formatId("uuid", "nas", "t-", 2)).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("writes numeric ids as numbers and reads them back as text, leaving other numbers", () => {
    const id = numericId("nas", "", 7);
    const answer = idsAsNumbers({ id, records: [{ instanceId: id, aidcId: "1", quota: 5 }] });
    expect(answer).toEqual({
      id: Number(id),
      records: [{ instanceId: Number(id), aidcId: "1", quota: 5 }],
    });
    expect(idsAsText({ id: Number(id), aidcId: 1, capacity: 60 })).toEqual({
      id,
      aidcId: 1,
      capacity: 60,
    });
  });
});

describe("create answer shapes", () => {
  it.each([
    ["key", "string", (k: string) => k],
    ["subscriptionKey", "string", (k: string) => ({ subscriptionKey: k })],
    ["keyObject", "string", (k: string) => ({ key: k })],
    ["orderId", "number", (k: string) => ({ orderId: Number(k) })],
    [
      "keyAndInstanceId",
      "string",
      (k: string) => ({ subscriptionKey: k, instanceId: "nas-000001" }),
    ],
    ["renamedField", "string", (k: string) => ({ requestNo: k })],
  ] as const)("answers a NAS order as %s (keys as %s)", async (shape, format, expected) => {
    const svc = await startEmulatedService({
      emulator: { createAnswerShape: shape, subscriptionKeyFormat: format, idTag: "" },
    });
    try {
      const res = await fetch(`${svc.emulator.url}/v1/subscription/nasStorage/create`, {
        method: "POST",
        headers: { Authorization: `Bearer ${svc.apiKey}`, "Content-Type": "application/json" },
        body: JSON.stringify({ productCode: "nas.fixed.200" }),
      });
      const [key] = [...svc.emulator.state.subscriptions.keys()];
      expect(((await res.json()) as { data: unknown }).data).toEqual(expected(key ?? ""));
    } finally {
      await svc.stop();
    }
  });
});
