/**
 * The Bucket status keeps what a reconcile applied (status.lastApplied) until the
 * status shows it: a status write that fails (a conflict, retried by the next
 * reconcile, which applies nothing) must not lose a drift correction.
 */
import { describe, expect, it } from "vitest";
import type { ManagedFacts } from "../managed/call.js";
import type { AppliedRecord } from "./changes.js";
import { bucketKind } from "./controller.js";
import type { BucketExternalClient, BucketObject } from "./external.js";

const created: AppliedRecord = { time: "2026-01-01T00:00:00Z", changes: ["tags"], drift: false };
const drift: AppliedRecord = {
  time: "2026-01-01T00:01:00Z",
  changes: ["versioning Enabled"],
  drift: true,
};

function bucket(lastApplied: AppliedRecord): BucketObject {
  return {
    apiVersion: "aidc.io/v1alpha1",
    kind: "Bucket",
    metadata: { name: "data", namespace: "ns", uid: "u1", generation: 1 },
    spec: { adopt: false, forceDestroy: false, deletionPolicy: "Orphan" },
    status: { observedGeneration: 1, bucketName: "data", lastApplied },
  };
}

describe("the Bucket status's lastApplied", () => {
  it("stays what the reconcile applied until the status shows it, then is read from the status", () => {
    const kind = bucketKind(async () => undefined, 1_000);
    const facts: ManagedFacts = { externalId: "data" };
    const lastApplied = (obj: BucketObject) =>
      (kind.status(obj, facts, undefined) as { lastApplied?: AppliedRecord }).lastApplied;
    const { applied } = kind.connect(undefined as never) as BucketExternalClient;
    applied.set("u1", drift);
    // The write of this status failed: the next reconcile (nothing applied) still has it.
    expect(lastApplied(bucket(created))).toEqual(drift);
    expect(lastApplied(bucket(created))).toEqual(drift);
    // Written and seen: the status has it, and the record is no longer kept.
    expect(lastApplied(bucket(drift))).toEqual(drift);
    expect(applied.has("u1")).toBe(false);
    expect(lastApplied(bucket(drift))).toEqual(drift);
  });
});
