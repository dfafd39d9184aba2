/**
 * A Bucket under deletionPolicy Delete with forceDestroy whose bucket has object lock
 * (made outside with it, then adopted), against real MinIO: versions under GOVERNANCE
 * or COMPLIANCE retention or a legal hold are named in Ready=False BucketObjectLocked,
 * never bypassed; the others are deleted; the object keeps its finalizer until the
 * retention ends and the user lifts the hold, and then the bucket is deleted.
 */
import {
  CreateBucketCommand,
  HeadObjectCommand,
  PutObjectCommand,
  PutObjectLegalHoldCommand,
} from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bucketController } from "../../src/controllers/bucket/controller.js";
import { bucketCrd } from "../../src/crds/bucket.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";
import { startTestS3, type TestS3 } from "../support/s3.js";

/** How long the retention of the test's objects lasts from their write. */
const RETENTION_MS = 10_000;

describe("Bucket forceDestroy under object lock", () => {
  let s3: TestS3;
  let op: TestOperator;
  let buckets: ObjectsOf;
  let namespace = "";
  beforeAll(async () => {
    s3 = await startTestS3();
    namespace = await createNamespace(adminKubeConfig(), "bucket-lock");
    op = await startTestOperator({
      controllers: [(deps) => bucketController(deps, { visibilityGraceMs: 2_000 })],
      namespaces: [namespace],
      // A user's lifted hold is seen at the next poll.
      pollIntervalMs: 2_000,
      config: { objectStorage: s3.config },
    });
    buckets = new ObjectsOf(op.kube, bucketCrd, namespace);
  }, 120_000);

  afterAll(async () => {
    await op?.stop();
    await s3?.stop();
  });

  it("names the locked versions, deletes the others, bypasses nothing, and deletes the bucket once the locks are gone", async () => {
    const name = `locked-${namespace.split("-").pop()}`;
    const c = s3.sdk();
    await c.send(new CreateBucketCommand({ Bucket: name, ObjectLockEnabledForBucket: true }));
    await buckets.create("locked", {
      name,
      adopt: true,
      deletionPolicy: "Delete",
      forceDestroy: true,
    });
    await buckets.waitForCondition("locked", "Ready", "True", "Available", 30_000);
    const until = new Date(Date.now() + RETENTION_MS);
    const put = (Key: string, lock: Partial<ConstructorParameters<typeof PutObjectCommand>[0]>) =>
      c.send(new PutObjectCommand({ Bucket: name, Key, Body: Key, ...lock }));
    const gov = await put("gov", {
      ObjectLockMode: "GOVERNANCE",
      ObjectLockRetainUntilDate: until,
    });
    await put("comp", { ObjectLockMode: "COMPLIANCE", ObjectLockRetainUntilDate: until });
    await put("hold", { ObjectLockLegalHoldStatus: "ON" });
    await put("free", {});
    await buckets.delete("locked");

    const obj = await buckets.waitForCondition(
      "locked",
      "Ready",
      "False",
      "BucketObjectLocked",
      8_000,
    );
    const message = conditionOf(obj, "Ready")?.message ?? "";
    const at = until.toISOString().replace(/\.\d{3}Z$/, "Z");
    expect(message).toContain(`bucket ${name} is not deleted: object lock keeps 3 versions (`);
    expect(message).toContain(
      `gov (version ${gov.VersionId}) under GOVERNANCE retention until ${at}`,
    );
    expect(message).toContain(`under COMPLIANCE retention until ${at}`);
    expect(message).toContain("hold (version");
    expect(message).toContain("under a legal hold");
    expect(message).toContain("never bypasses retention");
    expect(obj.metadata?.finalizers).toContain("aidc.io/bucket");
    await buckets.waitForEvents("locked", ["ObjectsDeleted", "BucketObjectLocked"]);
    expect(await buckets.eventNotes("locked", "ObjectsDeleted")).toEqual([
      `deleted 1 object version or delete marker of bucket ${name} (spec.forceDestroy)`,
    ]);
    // Governance retention is the user's to bypass: the version is there.
    const head = await c.send(
      new HeadObjectCommand({ Bucket: name, Key: "gov", VersionId: gov.VersionId }),
    );
    expect(head.ObjectLockMode).toBe("GOVERNANCE");

    // The retention ends: only the held version is named, and the bucket stays.
    const held = await buckets.waitFor(
      "locked",
      (o) =>
        /keeps 1 version \(hold \(version [^)]+\) under a legal hold\)/.test(
          conditionOf(o, "Ready")?.message ?? "",
        ),
      RETENTION_MS + 10_000,
    );
    expect(conditionOf(held, "Ready")?.reason).toBe("BucketObjectLocked");
    expect(await s3.client().headBucket(name)).toBe("Present");

    // The user lifts the hold: the next poll deletes the version, then the bucket.
    await c.send(
      new PutObjectLegalHoldCommand({ Bucket: name, Key: "hold", LegalHold: { Status: "OFF" } }),
    );
    await buckets.waitForGone("locked", 20_000);
    expect(await s3.client().headBucket(name)).toBe("Absent");
  });

  it("releases the object and leaves the bucket and its data when the user sets deletionPolicy: Orphan, as the condition says", async () => {
    const name = `orphaned-${namespace.split("-").pop()}`;
    const c = s3.sdk();
    await c.send(new CreateBucketCommand({ Bucket: name, ObjectLockEnabledForBucket: true }));
    await buckets.create("orphaned", {
      name,
      adopt: true,
      deletionPolicy: "Delete",
      forceDestroy: true,
    });
    await buckets.waitForCondition("orphaned", "Ready", "True", "Available", 30_000);
    await c.send(
      new PutObjectCommand({
        Bucket: name,
        Key: "hold",
        Body: "h",
        ObjectLockLegalHoldStatus: "ON",
      }),
    );
    await buckets.delete("orphaned");
    await buckets.waitForCondition("orphaned", "Ready", "False", "BucketObjectLocked", 10_000);
    await buckets.patchSpec("orphaned", { deletionPolicy: "Orphan" });
    await buckets.waitForGone("orphaned", 20_000);
    expect(await s3.client().headBucket(name)).toBe("Present");
    expect(await s3.client().countObjectVersions(name)).toEqual({ count: 1, more: false });
  });
});
