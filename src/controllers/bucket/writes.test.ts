/**
 * A write the object storage will not take is not sent again every poll: one answered
 * NotImplemented is held at its generation, sent again after a spec change or an hour.
 */
import pino from "pino";
import { describe, expect, it } from "vitest";
import type { LifecycleRule, ObjectStorageClient } from "../../service/object-storage.js";
import { ObjectStorageNotImplementedError } from "../../service/object-storage-errors.js";
import type { ManagedCall } from "../managed/call.js";
import { BucketExternalClient, type BucketObject } from "./external.js";
import type { BucketRemote } from "./features.js";
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
function reconcile(spec: Partial<BucketObject["spec"]>, generation = 1, afterMs = 0) {
  const obj: BucketObject = {
    apiVersion: "aidc.io/v1alpha1",
    kind: "Bucket",
    metadata: { name: "data", namespace: "ns", uid: "u1", generation },
    spec: { adopt: false, forceDestroy: false, deletionPolicy: "Orphan", ...spec },
    status: { observedGeneration: generation, bucketName: "data" },
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
