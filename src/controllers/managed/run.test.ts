import { describe, expect, it } from "vitest";
import { ConflictError, RetryableError, TerminalError } from "../../runtime/errors.js";
import { ServiceRefusedError, ServiceThrottledError } from "../../service/errors.js";
import { ERR, step, wrapError } from "./run.js";

describe("a failed step", () => {
  it.each([
    {
      reason: "a call bounced by the rate limit is retried when the limit has room",
      cause: new ServiceThrottledError("saturated", { endpoint: "getNas", code: undefined }, 1_500),
      type: RetryableError,
      want: { reason: "ConnectionThrottled", requeueAfterMs: 1_500, waiting: false },
    },
    {
      reason: "an expected wait stays one (a Normal event)",
      cause: new RetryableError("NasVolumeNotReady", "not ready", { waiting: true }),
      type: RetryableError,
      want: { reason: "NasVolumeNotReady", requeueAfterMs: undefined, waiting: true },
    },
    {
      reason: "a refusal of the service stays terminal",
      cause: new ServiceRefusedError("refused", { endpoint: "getNas", code: 400 }),
      type: TerminalError,
      want: { reason: "ReconcileTerminal" },
    },
    {
      reason: "a terminal error keeps its reason",
      cause: new TerminalError("UnknownProductRefused", "no such product"),
      type: TerminalError,
      want: { reason: "UnknownProductRefused" },
    },
    {
      reason: "any other failure is retried with backoff",
      cause: new Error("boom"),
      type: RetryableError,
      want: { reason: "ReconcileError", requeueAfterMs: undefined, waiting: false },
    },
  ])("keeps what the cause says: $reason", async ({ cause, type, want }) => {
    const err = await step(ERR.observe, () => Promise.reject(cause)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(type);
    expect(err).toMatchObject({
      ...want,
      message: `cannot observe the remote resource: ${cause.message}`,
      cause,
    });
    expect(wrapError(ERR.observe, cause)).toMatchObject(want);
  });
});

describe("a conflicting write in a step", () => {
  it("stays a ConflictError, which the runtime retries quietly", () => {
    const conflict = new ConflictError("spec update", new Error("409"));
    expect(wrapError(ERR.observe, conflict)).toBe(conflict);
  });
});
