import { describe, expect, it } from "vitest";
import { RetryableError, TerminalError } from "../../runtime/errors.js";
import { EndpointDisabledError, ServiceAuthError } from "../../service/errors.js";
import {
  DEFAULT_SUBSCRIPTION_POLL_MS,
  type DeletionInput,
  type DeletionStep,
  decideDeletion,
  firstSubscriptionPollMs,
  heldReadyCondition,
  NO_DELETE_OPERATION,
  soonPollMs,
  subscriptionPollDelay,
  syncedConditionOf,
} from "./decisions.js";

describe("firstSubscriptionPollMs and soonPollMs", () => {
  it("take the loop's first subscription poll, else the default; soon is five of them, at most the poll interval", () => {
    expect(firstSubscriptionPollMs({})).toBe(DEFAULT_SUBSCRIPTION_POLL_MS);
    expect(firstSubscriptionPollMs({ subscriptionPollMs: 200 })).toBe(200);
    expect(soonPollMs({ pollIntervalMs: 30_000 })).toBe(5 * DEFAULT_SUBSCRIPTION_POLL_MS);
    expect(soonPollMs({ pollIntervalMs: 30_000, subscriptionPollMs: 200 })).toBe(1_000);
    expect(soonPollMs({ pollIntervalMs: 600, subscriptionPollMs: 200 })).toBe(600);
  });
});

describe("subscriptionPollDelay", () => {
  const cases: { reason: string; age: number; want: number }[] = [
    { reason: "a fresh subscription is polled after the first delay", age: 0, want: 1000 },
    {
      reason: "the delay is half the age once that exceeds the first delay",
      age: 6000,
      want: 3000,
    },
    { reason: "the delay never exceeds the poll interval", age: 600_000, want: 30_000 },
    { reason: "an unknown age polls after the first delay", age: Number.NaN, want: 1000 },
    { reason: "a negative age (clock skew) polls after the first delay", age: -5000, want: 1000 },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      expect(subscriptionPollDelay(c.age, 1000, 30_000)).toBe(c.want);
    });
  }

  it("waits longer the older the subscription is", () => {
    const delays = [0, 2000, 4000, 8000, 16000].map((a) => subscriptionPollDelay(a, 1000, 30_000));
    expect([...delays].sort((a, b) => a - b)).toEqual(delays);
    expect(delays[4]).toBeGreaterThan(delays[0] as number);
  });
});

describe("decideDeletion", () => {
  const base: DeletionInput = {
    policy: "Orphan",
    externalId: undefined,
    createInFlight: false,
    canDelete: true,
  };
  const cases: { reason: string; input: Partial<DeletionInput>; want: DeletionStep }[] = [
    {
      reason: "Orphan leaves a known remote resource",
      input: { externalId: "nas-1" },
      want: { step: "Orphan" },
    },
    {
      reason: "Orphan with a create in flight leaves whatever it creates, and says so",
      input: { createInFlight: true },
      want: { step: "Orphan" },
    },
    {
      reason: "Orphan without a remote resource just releases the finalizer",
      input: {},
      want: { step: "Release" },
    },
    {
      reason: "Delete deletes a known remote resource",
      input: { policy: "Delete", externalId: "nas-1" },
      want: { step: "Delete", externalId: "nas-1" },
    },
    {
      reason: "Delete without a delete operation orphans with a warning",
      input: { policy: "Delete", externalId: "nas-1", canDelete: false },
      want: { step: "Orphan", warn: NO_DELETE_OPERATION },
    },
    {
      reason: "Delete waits for a create in flight so its resource is not leaked",
      input: { policy: "Delete", createInFlight: true },
      want: { step: "WaitForCreate" },
    },
    {
      reason: "Delete of an object that never created anything releases the finalizer",
      input: { policy: "Delete" },
      want: { step: "Release" },
    },
    {
      reason: "Delete of a create in flight without a delete operation orphans with a warning",
      input: { policy: "Delete", createInFlight: true, canDelete: false },
      want: { step: "Orphan", warn: NO_DELETE_OPERATION },
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      expect(decideDeletion({ ...base, ...c.input })).toEqual(c.want);
    });
  }
});

describe("syncedConditionOf", () => {
  const cases: { reason: string; err: unknown; want: { reason: string; message: string } }[] = [
    {
      reason: "a retryable error without a reason is a ReconcileError",
      err: new Error("socket hang up"),
      want: { reason: "ReconcileError", message: "socket hang up" },
    },
    {
      reason: "an error's own reason is kept when it is one of the reason table",
      err: new RetryableError("NasVolumeNotReady", "NasVolume data is not Ready yet"),
      want: { reason: "NasVolumeNotReady", message: "NasVolume data is not Ready yet" },
    },
    {
      reason: "a reason outside the reason table becomes ReconcileError by its class",
      err: new RetryableError("Conflict", "the object changed"),
      want: { reason: "ReconcileError", message: "the object changed" },
    },
    {
      reason: "a refused API key is ApiKeyRefused",
      err: new ServiceAuthError("403 from getNas", { code: 403, endpoint: "getNas" }),
      want: { reason: "ApiKeyRefused", message: "403 from getNas" },
    },
    {
      reason: "a terminal error keeps its reason",
      err: new TerminalError("CapacityRefused", "too big"),
      want: { reason: "CapacityRefused", message: "too big" },
    },
    {
      reason: "a terminal service error without a reason is ReconcileTerminal",
      err: new EndpointDisabledError("deleteNas"),
      want: {
        reason: "ReconcileTerminal",
        message: new EndpointDisabledError("deleteNas").message,
      },
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      expect(syncedConditionOf(c.err)).toEqual({ type: "Synced", status: "False", ...c.want });
    });
  }
});

describe("heldReadyCondition", () => {
  const refused = new ServiceAuthError("GET /x was refused with status 403", {
    endpoint: "getNas",
    code: 403,
  });
  const wrapped = new TerminalError("ApiKeyRefused", "cannot observe: refused", {
    cause: refused,
  });
  const ready = (status: "True" | "False" | "Unknown") => ({
    type: "Ready",
    status,
    reason: "Available",
    message: "",
    lastTransitionTime: "2026-11-23T00:00:00Z",
  });
  const cases: {
    reason: string;
    err: unknown;
    previous?: ReturnType<typeof ready>;
    want: string | undefined;
  }[] = [
    {
      reason: "a refused key turns Ready=True into Unknown",
      err: refused,
      previous: ready("True"),
      want: "Unknown",
    },
    { reason: "a new object gets Ready=False", err: refused, want: "False" },
    {
      reason: "a not-ready object stays False, with the hold's reason",
      err: wrapped,
      previous: ready("False"),
      want: "False",
    },
    {
      reason: "a wrapped external hold counts as one",
      err: wrapped,
      previous: ready("True"),
      want: "Unknown",
    },
    {
      reason: "a spec refusal leaves Ready alone",
      err: new TerminalError("CapacityRefused", "too big"),
      previous: ready("True"),
      want: undefined,
    },
    {
      reason: "a retryable failure leaves Ready alone",
      err: new RetryableError("ReconcileError", "503"),
      previous: ready("True"),
      want: undefined,
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      const got = heldReadyCondition(c.err, c.previous);
      expect(got?.status).toBe(c.want);
      if (c.want) expect(got).toMatchObject({ type: "Ready", reason: "ApiKeyRefused" });
    });
  }
});
