import pino from "pino";
import { describe, expect, it } from "vitest";
import type { Bucket } from "../../crds/bucket.js";
import type { ObjectStorageClient } from "../../service/object-storage.js";
import {
  deleteFailure,
  ObjectsLockedError,
  type VersionLock,
} from "../../service/object-storage-lock.js";
import type { ManagedCall } from "../managed/call.js";
import { beforeBucketDelete } from "./deletion.js";

const NOW = new Date("2026-01-01T00:00:00Z");
const POLL_MS = 30_000;
const WORM = "Object is WORM protected and cannot be overwritten";

/** A bucket whose forceDestroy `deleteAllVersions` ends as `thrown`; `locks` answers the reads. */
function storage(thrown: Error, locks: VersionLock[]) {
  const asked: string[] = [];
  const s3 = {
    accountBuckets: async () => [{ name: "data", creationDate: new Date("2025-01-01T00:00:00Z") }],
    getTags: async () => ({}),
    deleteAllVersions: async () => {
      throw thrown;
    },
    versionLocks: async (_b: string, versions: { key: string; versionId?: string }[]) => {
      asked.push(...versions.map((v) => v.key));
      return versions.map((v) => locks.find((l) => l.key === v.key) ?? v);
    },
  } as unknown as ObjectStorageClient;
  return { s3, asked };
}

function call(ready?: { reason: string; message: string }) {
  const events: string[] = [];
  const obj = {
    apiVersion: "aidc.io/v1alpha1",
    kind: "Bucket",
    metadata: { name: "data", namespace: "ns", uid: "u1", generation: 1 },
    spec: { adopt: true, forceDestroy: true, deletionPolicy: "Delete" },
    status: {
      bucketName: "data",
      creationTime: "2025-01-01T00:00:00Z",
      conditions: ready
        ? [{ type: "Ready", status: "False", lastTransitionTime: "", ...ready }]
        : [],
    },
  } as unknown as Bucket;
  const c: ManagedCall<Bucket> = {
    obj,
    refs: undefined,
    now: () => NOW,
    log: pino({ level: "silent" }),
    normal: (r, m) => void events.push(`Normal ${r}: ${m}`),
    warning: (r, m) => void events.push(`Warning ${r}: ${m}`),
    annotate: async () => obj,
  };
  return { c, events };
}

const locked = (keys: string[], deleted = 0, more = false) =>
  deleteFailure(
    "data",
    keys.map((key) => ({ key, versionId: `v-${key}`, code: "InvalidRequest", message: WORM })),
    { tried: keys.length + deleted, deleted, more },
  );

describe("a forceDestroy that object lock stops", () => {
  it("waits as BucketObjectLocked naming the versions, their mode, end and legal hold, and tells what was deleted", async () => {
    const until = new Date(NOW.getTime() + 3_600_000);
    const { s3 } = storage(locked(["gov", "hold"], 2), [
      { key: "gov", versionId: "v-gov", mode: "GOVERNANCE", retainUntil: until },
      { key: "hold", versionId: "v-hold", legalHold: true },
    ]);
    const { c, events } = call();
    const answer = await beforeBucketDelete(s3, c, "data", POLL_MS);
    const message =
      "bucket data is not deleted: object lock keeps 2 versions (gov (version v-gov) under GOVERNANCE retention until 2026-01-01T01:00:00Z; hold (version v-hold) under a legal hold). The operator never bypasses retention nor lifts a legal hold: lift the holds, shorten GOVERNANCE retention yourself, wait until the retention ends, or set deletionPolicy: Orphan";
    expect(answer).toEqual({
      waiting: message,
      reason: "BucketObjectLocked",
      requeueAfterMs: POLL_MS,
    });
    expect(events).toEqual([
      "Normal ObjectsDeleted: deleted 2 object versions and delete markers of bucket data (spec.forceDestroy)",
      `Warning BucketObjectLocked: ${message}`,
    ]);
    // The same wait again: no second Warning.
    const again = call({ reason: "BucketObjectLocked", message });
    const { s3: same } = storage(locked(["gov", "hold"]), [
      { key: "gov", versionId: "v-gov", mode: "GOVERNANCE", retainUntil: until },
      { key: "hold", versionId: "v-hold", legalHold: true },
    ]);
    await beforeBucketDelete(same, again.c, "data", POLL_MS);
    expect(again.events).toEqual([]);
  });

  it("says one deleted version in the singular", async () => {
    const { s3 } = storage(locked(["hold"], 1), [
      { key: "hold", versionId: "v-hold", legalHold: true },
    ]);
    const { c, events } = call();
    await beforeBucketDelete(s3, c, "data", POLL_MS);
    expect(events[0]).toBe(
      "Normal ObjectsDeleted: deleted 1 object version or delete marker of bucket data (spec.forceDestroy)",
    );
  });

  it("looks again just after the earliest retention named ends when that is before the next poll, not for a held one", async () => {
    const soon = new Date(NOW.getTime() + 5_000);
    const { s3 } = storage(locked(["a", "b"]), [
      { key: "a", mode: "COMPLIANCE", retainUntil: soon },
      {
        key: "b",
        mode: "GOVERNANCE",
        retainUntil: new Date(NOW.getTime() + 2_000),
        legalHold: true,
      },
    ]);
    const answer = await beforeBucketDelete(s3, call().c, "data", POLL_MS);
    expect(answer).toMatchObject({ requeueAfterMs: 6_000 });
  });

  it("reads the locks of three versions only, and counts the others", async () => {
    const { s3, asked } = storage(locked(["a", "b", "c", "d", "e"], 0, true), []);
    const answer = await beforeBucketDelete(s3, call().c, "data", POLL_MS);
    expect(asked).toEqual(["a", "b", "c"]);
    expect(answer).toMatchObject({
      waiting: expect.stringContaining(
        "keeps at least 5 versions (a (version v-a) (lock unreadable);",
      ),
    });
    expect((answer as { waiting: string }).waiting).toContain("(lock unreadable), and 2 more)");
  });
});

describe("the failures of a DeleteObjects", () => {
  it("are a lock when each is refused by object lock (MinIO's and S3's words), else the first other one", () => {
    const aws = "Access Denied because object protected by object lock.";
    expect(
      deleteFailure("data", [{ key: "k", code: "AccessDenied", message: aws }], {
        tried: 1,
        deleted: 0,
        more: false,
      }),
    ).toBeInstanceOf(ObjectsLockedError);
    const mixed = deleteFailure(
      "data",
      [
        { key: "k", code: "InvalidRequest", message: WORM },
        { key: "j", code: "AccessDenied", message: "Access Denied." },
      ],
      { tried: 3, deleted: 1, more: false },
    );
    expect(mixed).not.toBeInstanceOf(ObjectsLockedError);
    expect(mixed.message).toContain("2 of 3 versions not deleted (AccessDenied: Access Denied.)");
    expect(mixed.message).toContain("need s3:DeleteObject and s3:DeleteObjectVersion");
  });
});
