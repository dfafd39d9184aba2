/**
 * Buckets on other S3 servers' answers: the project's S3 server (MinIO) behind
 * test/support/s3-front.ts, which gives the answers of another server captured in
 * test/fixtures/s3 where they differ from MinIO's.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bucketController } from "../../src/controllers/bucket/controller.js";
import { OWNER_TAG } from "../../src/controllers/bucket/features.js";
import { bucketCrd } from "../../src/crds/bucket.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";
import { startTestS3, type TestS3 } from "../support/s3.js";
import { S3Front, s3Fixture } from "../support/s3-front.js";

describe("Buckets on other S3 servers' answers", () => {
  let s3: TestS3;
  let front: S3Front;
  let op: TestOperator;
  let buckets: ObjectsOf;
  let namespace = "";
  const unique = (base: string) => `${base}-${namespace.split("-").pop()}`;

  beforeAll(async () => {
    s3 = await startTestS3();
    front = await new S3Front(s3.server.url, []).start();
    namespace = await createNamespace(adminKubeConfig(), "bucket-servers");
    op = await startTestOperator({
      controllers: [(deps) => bucketController(deps, { visibilityGraceMs: 2_000 })],
      namespaces: [namespace],
      config: {
        objectStorage: { ...s3.config, endpoint: front.url },
        holdBackoff: { baseMs: 500, maxMs: 1_000 },
      },
    });
    buckets = new ObjectsOf(op.kube, bucketCrd, namespace);
  }, 120_000);

  afterAll(async () => {
    await op?.stop();
    await front?.stop();
    await s3?.stop();
  });

  it("adopts a bucket of a server that answers 200 to its CreateBucket (S3 in us-east-1, moto) without sending it, keeping its tags", async () => {
    const name = unique("legacy");
    const c = s3.client();
    expect(await c.createBucket(name)).toBe("Created");
    await c.putTags(name, { owner: "someone" });
    front.use(await s3Fixture("moto-5.2.5-create-own-bucket-us-east-1"));
    await buckets.create("legacy", { name, adopt: true, versioning: "Enabled" });
    await buckets.waitForCondition("legacy", "Ready", "True", "Available", 30_000);
    const tags = await c.getTags(name);
    expect(tags.owner).toBe("someone");
    expect(tags[OWNER_TAG]).toBeDefined();
    expect(await c.getVersioning(name)).toBe("Enabled");
    await buckets.waitForEvents("legacy", ["Adopted"]);
    expect(front.answered).toEqual([]);
  });

  it("reports the tags and policy of a server that takes their PUT for a CreateBucket and their GET for a listing (gofakes3) as FeatureNotImplemented, Ready", async () => {
    const name = unique("fake");
    front.use(await s3Fixture("gofakes3-1.2.0-policy-and-tags"));
    await buckets.create("fake", {
      name,
      versioning: "Enabled",
      tags: { team: "vision" },
      policy: JSON.stringify({ Version: "2012-10-17", Statement: [] }),
    });
    const obj = await buckets.waitForCondition(
      "fake",
      "Synced",
      "False",
      "FeatureNotImplemented",
      30_000,
    );
    expect(conditionOf(obj, "Synced")?.message).toContain(
      "the object storage does not implement bucket policy, tags",
    );
    expect(conditionOf(obj, "Ready")).toMatchObject({ status: "True", reason: "Available" });
    const status = obj.status as { unsupported?: string[]; policy?: boolean };
    expect(status.unsupported).toEqual(["bucket policy", "tags"]);
    expect(status).not.toHaveProperty("policy");
    // The features the server has are applied.
    expect(await s3.client().getVersioning(name)).toBe("Enabled");
    // The refused writes are not sent again at each poll (every 500 ms) of this generation.
    const writes = () => front.answered.filter((r) => r.startsWith(`PUT /${name}`)).length;
    const sent = writes();
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(writes()).toBe(sent);
  });

  it("names FieldNotKept for a lifecycle rule's field a server accepts and drops (Garage), without writing it again nor DriftCorrected", async () => {
    const name = unique("garage");
    front.use(await s3Fixture("garage-2.5.0-lifecycle-noncurrent-dropped"));
    const rule = { id: "expire-old", expirationDays: 7, noncurrentVersionExpirationDays: 30 };
    await buckets.create("garage", { name, lifecycleRules: [rule] });
    const obj = await buckets.waitForCondition("garage", "Synced", "False", "FieldNotKept", 30_000);
    expect(conditionOf(obj, "Synced")?.message).toContain(
      "accepted the write of spec.lifecycleRules[0].noncurrentVersionExpirationDays but does not show it at the next poll",
    );
    expect(conditionOf(obj, "Ready")).toMatchObject({ status: "True", reason: "Available" });
    const puts = () => front.seen.filter((r) => r.startsWith(`PUT /${name}/?lifecycle`)).length;
    expect(puts()).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(puts()).toBe(1);
    expect(await buckets.eventReasons("garage")).not.toContain("DriftCorrected");
    // Said once: the polls that find the same refusal record no more.
    expect(await buckets.eventCount("garage", "FieldNotKept")).toBe(1);
  });

  it("names the owner mark as the tags a server without them lacks when the spec sets none (gofakes3)", async () => {
    const name = unique("plain");
    front.use(await s3Fixture("gofakes3-1.2.0-policy-and-tags"));
    await buckets.create("plain", { name });
    const obj = await buckets.waitForCondition(
      "plain",
      "Synced",
      "False",
      "FeatureNotImplemented",
      30_000,
    );
    expect(conditionOf(obj, "Synced")?.message).toBe(
      `the object storage does not implement tags (the owner mark ${OWNER_TAG}) (it answered NotImplemented); remove the field from the spec or use a server that supports it`,
    );
    expect(conditionOf(obj, "Ready")).toMatchObject({ status: "True", reason: "Available" });
  });
});
