/**
 * A write the object storage will not take is not sent again every poll: one answered
 * NotImplemented, and one it accepts yet does not show at the next poll (Garage drops a
 * lifecycle rule's noncurrentVersionExpirationDays), are held at their generation, sent
 * again after a spec change or an hour, and the one not kept is no DriftCorrected.
 */
import pino from "pino";
import { describe, expect, it } from "vitest";
import type { LifecycleRule, ObjectStorageClient } from "../../service/object-storage.js";
import { ObjectStorageNotImplementedError } from "../../service/object-storage-errors.js";
import type { ManagedCall } from "../managed/call.js";
import { BucketExternalClient, type BucketObject } from "./external.js";
import { type BucketRemote, markOf, OWNER_TAG } from "./features.js";
import { REWRITE_AFTER_MS } from "./writes.js";

const T0 = Date.parse("2026-01-01T00:00:00Z");

/** A storage that refuses tags (NotImplemented) and keeps lifecycle rules without `drops`. */
function storage(drops: keyof LifecycleRule) {
  const sent: string[] = [];
  const state = { lifecycle: [] as LifecycleRule[] };
  const s3 = {
    putTags: async () => {
      sent.push("putTags");
      throw new ObjectStorageNotImplementedError("S3 PutBucketTagging: NotImplemented", {
        code: 501,
        endpoint: "s3:PutBucketTagging",
      });
    },
    putLifecycle: async (_b: string, rules: LifecycleRule[]) => {
      sent.push("putLifecycle");
      state.lifecycle = rules.map(({ [drops]: _dropped, ...kept }) => kept as LifecycleRule);
    },
  } as unknown as ObjectStorageClient;
  const external = new BucketExternalClient(async () => s3, new Map(), 1_000);
  const remote = (): BucketRemote => ({
    name: "data",
    url: "http://s3/data",
    region: "us-east-1",
    versioning: "Off",
    lifecycle: state.lifecycle,
    policy: undefined,
    tags: {},
    cors: [],
  });
  return { external, sent, remote, state };
}

/** A reconcile (its own call) at `generation`, `afterMs` after T0, of a Bucket observed before. */
function reconcile(
  spec: Partial<BucketObject["spec"]>,
  generation = 1,
  afterMs = 0,
  synced?: { reason: string; message: string },
) {
  const obj: BucketObject = {
    apiVersion: "aidc.io/v1alpha1",
    kind: "Bucket",
    metadata: { name: "data", namespace: "ns", uid: "u1", generation },
    spec: { adopt: false, forceDestroy: false, deletionPolicy: "Orphan", ...spec },
    status: {
      observedGeneration: generation,
      bucketName: "data",
      ...(synced
        ? {
            conditions: [
              {
                type: "Synced",
                status: "False",
                ...synced,
                lastTransitionTime: "2026-01-01T00:00:00Z",
                observedGeneration: generation,
              },
            ],
          }
        : {}),
    },
  };
  const warnings: string[] = [];
  const call: ManagedCall<BucketObject> = {
    obj,
    refs: undefined,
    now: () => new Date(T0 + afterMs),
    log: pino({ level: "silent" }),
    normal: () => undefined,
    warning: (reason) => warnings.push(reason),
    annotate: async () => obj,
  };
  return { call, warnings };
}

describe("a write the server answered NotImplemented", () => {
  const spec = { tags: { team: "a" } };

  it("is not sent again at its generation, but after a spec change or an hour", async () => {
    const { external, sent, remote } = storage("noncurrentVersionExpirationDays");
    for (let poll = 0; poll < 3; poll++) {
      const r = await external.update(reconcile(spec).call, "data", remote());
      expect(r).toMatchObject({ outcome: "Refused", reason: "FeatureNotImplemented" });
    }
    expect(sent).toEqual(["putTags"]);
    await external.update(reconcile(spec, 2).call, "data", remote());
    expect(sent).toEqual(["putTags", "putTags"]);
    await external.update(reconcile(spec, 2, REWRITE_AFTER_MS).call, "data", remote());
    expect(sent).toEqual(["putTags", "putTags", "putTags"]);
  });
});

describe("a field the server accepts and does not keep", () => {
  const rule = { id: "old", prefix: "", enabled: true, noncurrentVersionExpirationDays: 30 };
  const spec = { lifecycleRules: [rule] };
  /** The mark the server keeps, so that tags are no change. */
  const marked = (r: BucketRemote): BucketRemote => ({
    ...r,
    tags: { [OWNER_TAG]: markOf(reconcile({}).call.obj) },
  });

  it("is written once, then named FieldNotKept at each poll of its generation, without DriftCorrected", async () => {
    const { external, sent, remote } = storage("noncurrentVersionExpirationDays");
    const first = reconcile(spec);
    expect(await external.update(first.call, "data", marked(remote()))).toMatchObject({
      outcome: "Applied",
    });
    sent.length = 0;
    for (let poll = 1; poll <= 3; poll++) {
      const { call, warnings } = reconcile(spec, 1, poll * 30_000);
      const r = await external.update(call, "data", marked(remote()));
      expect(r).toEqual({
        outcome: "Refused",
        reason: "FieldNotKept",
        message: expect.stringMatching(
          /^the object storage accepted the write of spec\.lifecycleRules\[0\]\.noncurrentVersionExpirationDays but does not show it at the next poll \(it does not keep it/,
        ),
      });
      expect(warnings).toEqual([]);
    }
    expect(sent).toEqual([]);
  });

  it("is written again, as drift, when changed otherwise outside; after an hour, to look again, not as drift", async () => {
    const { external, sent, remote, state } = storage("noncurrentVersionExpirationDays");
    await external.update(reconcile(spec).call, "data", marked(remote()));
    await external.update(reconcile(spec, 1, 30_000).call, "data", marked(remote()));
    expect(sent).toEqual(["putLifecycle"]);
    state.lifecycle = [];
    const drift = reconcile(spec, 1, 60_000);
    await external.update(drift.call, "data", marked(remote()));
    expect(drift.warnings).toEqual(["DriftCorrected"]);
    expect(sent).toEqual(["putLifecycle", "putLifecycle"]);
    const later = reconcile(spec, 1, 60_000 + REWRITE_AFTER_MS);
    expect(await external.update(later.call, "data", marked(remote()))).toMatchObject({
      outcome: "Applied",
    });
    expect(later.warnings).toEqual([]);
    expect(sent).toEqual(["putLifecycle", "putLifecycle", "putLifecycle"]);
  });

  it("is no DriftCorrected when a process that does not remember the write sends it again at the generation Synced says FieldNotKept", async () => {
    for (const [reason, warned] of [
      ["FieldNotKept", []],
      ["ReconcileSuccess", ["DriftCorrected"]],
    ] as const) {
      // Written by the process before this one: the rule is there without the field.
      const { external, remote, state } = storage("noncurrentVersionExpirationDays");
      state.lifecycle = [{ id: "old", prefix: "", enabled: true }];
      const message =
        "the object storage accepted the write of spec.lifecycleRules[0].noncurrentVersionExpirationDays but…";
      const { call, warnings } = reconcile(spec, 1, 0, { reason, message });
      expect(await external.update(call, "data", marked(remote()))).toMatchObject({
        outcome: "Applied",
      });
      expect(warnings).toEqual(warned);
    }
  });
});
