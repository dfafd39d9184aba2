import { describe, expect, it } from "vitest";
import { type ConnectionMemory, REFUSAL_REFRESH_GAP_MS, refreshDue } from "./refresh.js";

const memory = (readAt?: number, refused: string[] = []): ConnectionMemory => ({
  ...(readAt === undefined
    ? {}
    : {
        read: {
          at: readAt,
          connectionVersion: "uid/1",
          training: [],
          nas: [],
          available: new Map(),
        },
      }),
  handled: new Map(),
  refusedCodes: new Set(refused),
});

describe("refreshDue", () => {
  const base = { now: 100_000, intervalMs: 60_000, connectionVersion: "uid/1", pendingRequests: 0 };
  it.each([
    { reason: "never read: now", memory: memory(), want: { due: true, why: "first" } },
    {
      reason: "read just now: at the interval",
      memory: memory(90_000),
      want: { due: false, inMs: 50_000 },
    },
    {
      reason: "read an interval ago: now",
      memory: memory(40_000),
      want: { due: true, why: "interval" },
    },
    {
      reason: "a refused code, read long enough ago: now",
      memory: memory(100_000 - REFUSAL_REFRESH_GAP_MS, ["x"]),
      want: { due: true, why: "refusedCode" },
    },
    {
      reason: "a refused code, read just now: after the gap",
      memory: memory(95_000, ["x"]),
      want: { due: false, inMs: REFUSAL_REFRESH_GAP_MS - 5_000 },
    },
  ])("$reason", ({ memory: m, want }) => {
    expect(refreshDue({ ...base, memory: m })).toEqual(want);
  });

  it("reads now for a reconcile-now request and for a changed connection", () => {
    expect(refreshDue({ ...base, memory: memory(99_000), pendingRequests: 1 })).toEqual({
      due: true,
      why: "requested",
    });
    expect(refreshDue({ ...base, memory: memory(99_000), connectionVersion: "uid/2" })).toEqual({
      due: true,
      why: "connectionChanged",
    });
  });
});
