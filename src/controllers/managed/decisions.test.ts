import { describe, expect, it } from "vitest";
import type { ManagedObject } from "./call.js";
import {
  type DeletionInput,
  type DeletionStep,
  decideDeletion,
  deletesRemote,
  isPaused,
  NO_DELETE_OPERATION,
  policiesOf,
  reconcileRequest,
} from "./decisions.js";
import {
  DEFAULT_SUBSCRIPTION_POLL_MS,
  firstSubscriptionPollMs,
  soonPollMs,
  subscriptionPollDelay,
} from "./run.js";

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

const obj = (
  spec: ManagedObject["spec"],
  annotations: Record<string, string> = {},
  status: ManagedObject["status"] = {},
): ManagedObject => ({ metadata: { name: "a", annotations }, spec, status });

describe("steering an object", () => {
  it("reads an absent list and * as every policy", () => {
    const all = { observe: true, create: true, update: true, delete: true, lateInitialize: true };
    expect(policiesOf(obj({}))).toEqual(all);
    expect(policiesOf(obj({ managementPolicies: ["*"] }))).toEqual(all);
  });

  it("reads Observe alone as observe-only", () => {
    expect(policiesOf(obj({ managementPolicies: ["Observe"] }))).toEqual({
      observe: true,
      create: false,
      update: false,
      delete: false,
      lateInitialize: false,
    });
  });

  it("deletes the remote resource only with deletionPolicy Delete and the Delete policy", () => {
    expect(deletesRemote(obj({ deletionPolicy: "Delete" }))).toBe(true);
    expect(deletesRemote(obj({ deletionPolicy: "Orphan" }))).toBe(false);
    expect(deletesRemote(obj({}))).toBe(false);
    expect(
      deletesRemote(obj({ deletionPolicy: "Delete", managementPolicies: ["Observe", "Update"] })),
    ).toBe(false);
    expect(
      deletesRemote(obj({ deletionPolicy: "Delete", managementPolicies: ["Observe", "Delete"] })),
    ).toBe(true);
  });

  it("pauses on the value true only", () => {
    expect(isPaused(obj({}, { "aidc.io/paused": "true" }))).toBe(true);
    expect(isPaused(obj({}, { "aidc.io/paused": "false" }))).toBe(false);
    expect(isPaused(obj({}))).toBe(false);
  });

  it("asks for a reconcile until the value is echoed in status", () => {
    const asked = { "aidc.io/reconcile-requested-at": "t1" };
    expect(reconcileRequest(obj({}, asked))).toBe("t1");
    expect(reconcileRequest(obj({}, asked, { lastHandledReconcileAt: "t1" }))).toBeUndefined();
    expect(reconcileRequest(obj({}, asked, { lastHandledReconcileAt: "t0" }))).toBe("t1");
    expect(reconcileRequest(obj({}))).toBeUndefined();
  });
});
