/**
 * Buckets whose S3 key pair lacks one permission, against real MinIO: a user made with
 * a policy that denies one action (test/support/minio-iam.ts), its keys written into
 * the operator's credentials directory. Each refusal is named (the action to grant)
 * and held on the slow backoff, nothing is lost meanwhile, and granting the action on
 * the server clears it without a change of the object.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { bucketController } from "../../src/controllers/bucket/controller.js";
import { OWNER_TAG } from "../../src/controllers/bucket/features.js";
import { repoRoot } from "../../src/controlplane/binaries.js";
import { bucketCrd } from "../../src/crds/bucket.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import { addMinioUser, allS3But, type MinioUser, type S3Policy } from "../support/minio-iam.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";
import { startTestS3, type TestS3 } from "../support/s3.js";

describe("a Bucket whose S3 credentials lack one permission", () => {
  let s3: TestS3;
  let op: TestOperator;
  let buckets: ObjectsOf;
  let namespace = "";
  const unique = (base: string) => `${base}-${namespace.split("-").pop()}`;
  /** Makes a user of `policy` and gives the operator its keys. */
  const useUser = async (policy: S3Policy): Promise<MinioUser> => {
    const user = await addMinioUser(s3.server, policy);
    await s3.writeCredentials(user.accessKeyId, user.secretAccessKey);
    // Read again once its credentialsRefreshMs (200 ms) has passed.
    await new Promise((r) => setTimeout(r, 400));
    return user;
  };
  const useUserWithout = (...actions: string[]) => useUser(allS3But(...actions));

  beforeAll(async () => {
    s3 = await startTestS3();
    namespace = await createNamespace(adminKubeConfig(), "bucket-access");
    op = await startTestOperator({
      controllers: [(deps) => bucketController(deps, { visibilityGraceMs: 2_000 })],
      namespaces: [namespace],
      config: { objectStorage: s3.config, holdBackoff: { baseMs: 500, maxMs: 1_000 } },
    });
    buckets = new ObjectsOf(op.kube, bucketCrd, namespace);
  }, 120_000);

  afterEach(async () => {
    await s3.writeCredentials(s3.server.accessKeyId, s3.server.secretAccessKey);
  });

  afterAll(async () => {
    await op?.stop();
    await s3?.stop();
  });

  it("without s3:ListBucket: the HEAD's 403 names it beside another account's bucket, and nothing is created until granted", async () => {
    const name = unique("nolist");
    // MinIO answers a HEAD for s3:HeadBucket (its own action) as well as s3:ListBucket.
    const user = await useUserWithout("s3:ListBucket", "s3:HeadBucket");
    await buckets.create("nolist", { name });
    const refused = await buckets.waitForCondition(
      "nolist",
      "Ready",
      "False",
      "BucketNameTaken",
      30_000,
    );
    expect(conditionOf(refused, "Ready")?.message).toBe(
      `a bucket named ${name} answered 403 to HEAD: another account has it (bucket names are global: choose another spec.name), or the S3 credentials need s3:ListBucket on bucket ${name}: grant it in their policy, and check that no bucket policy denies it`,
    );
    expect(await s3.client().headBucket(name)).toBe("Absent");
    await user.setPolicy(allS3But());
    await buckets.waitForCondition("nolist", "Ready", "True", "Available", 30_000);
    expect(await s3.client().headBucket(name)).toBe("Present");
  });

  it("scoped to other buckets (no bucket list either): the HEAD's 403 names s3:ListBucket on the bucket, not s3:ListAllMyBuckets", async () => {
    const name = unique("outside");
    const user = await useUser({
      Version: "2012-10-17",
      Statement: [{ Effect: "Allow", Action: ["s3:*"], Resource: ["arn:aws:s3:::team-a-*"] }],
    });
    await buckets.create("outside", { name });
    const refused = await buckets.waitForCondition(
      "outside",
      "Ready",
      "False",
      "BucketNameTaken",
      30_000,
    );
    expect(conditionOf(refused, "Ready")?.message).toContain(
      `or the S3 credentials need s3:ListBucket on bucket ${name}`,
    );
    await user.setPolicy(allS3But());
    await buckets.waitForCondition("outside", "Ready", "True", "Available", 30_000);
  });

  it("without the bucket list (s3:ListAllMyBuckets, which S3 grants on every bucket or none): Ready, its spec kept, no creationTime", async () => {
    const name = unique("unlisted");
    // MinIO lists the buckets a key may list or locate without s3:ListAllMyBuckets; it
    // refuses the list, as S3 does, when none is (its HEAD takes s3:HeadBucket).
    await useUserWithout("s3:ListAllMyBuckets", "s3:ListBucket", "s3:GetBucketLocation");
    await buckets.create("unlisted", { name, tags: { team: "a" } });
    const ready = await buckets.waitForCondition("unlisted", "Ready", "True", "Available", 30_000);
    expect(ready.status).not.toHaveProperty("creationTime");
    await buckets.patchSpec("unlisted", { tags: { team: "b" } });
    await eventually(async () => (await s3.client().getTags(name)).team === "b", 30_000);
    expect(conditionOf(await buckets.get("unlisted"), "Synced")?.status).toBe("True");
  });

  it("losing s3:ListBucket on its own bucket: S3AccessDenied naming it (the account lists the bucket), Ready Unknown, then True once granted", async () => {
    const name = unique("revoked");
    await buckets.create("revoked", { name });
    await buckets.waitForCondition("revoked", "Ready", "True", "Available", 30_000);
    const user = await useUserWithout("s3:ListBucket", "s3:HeadBucket");
    // Whether the bucket is there cannot be read: Ready is Unknown, not False.
    const held = await buckets.waitForCondition(
      "revoked",
      "Ready",
      "Unknown",
      "S3AccessDenied",
      30_000,
    );
    expect(conditionOf(held, "Synced")?.message).toContain(
      `HEAD answered 403, yet the account lists the bucket (the S3 credentials need s3:ListBucket on bucket ${name}`,
    );
    await user.setPolicy(allS3But());
    await buckets.waitForCondition("revoked", "Ready", "True", "Available", 30_000);
  });

  it("without the reads of features the spec omits (lifecycle rules, CORS): Ready without their status fields; S3AccessDenied once the spec states one, until granted", async () => {
    const name = unique("noreads");
    const user = await useUserWithout("s3:GetLifecycleConfiguration", "s3:GetBucketCors");
    await buckets.create("noreads", { name });
    const ready = await buckets.waitForCondition("noreads", "Ready", "True", "Available", 30_000);
    expect(conditionOf(ready, "Synced")).toMatchObject({ status: "True" });
    expect(ready.status).toMatchObject({ versioning: "Off", policy: false, tags: 1 });
    expect(ready.status).not.toHaveProperty("lifecycleRules");
    expect(ready.status).not.toHaveProperty("corsRules");
    await buckets.patchSpec("noreads", {
      lifecycleRules: [{ id: "tmp", prefix: "tmp/", expirationDays: 7 }],
    });
    const held = await buckets.waitForCondition(
      "noreads",
      "Synced",
      "False",
      "S3AccessDenied",
      30_000,
    );
    expect(conditionOf(held, "Synced")?.message).toContain(
      `the S3 credentials need s3:GetLifecycleConfiguration on bucket ${name}`,
    );
    await user.setPolicy(allS3But("s3:GetBucketCors"));
    const synced = await buckets.waitFor(
      "noreads",
      (o) => (o.status as { lifecycleRules?: number }).lifecycleRules === 1,
      30_000,
    );
    expect(conditionOf(synced, "Ready")).toMatchObject({ status: "True" });
    expect((await s3.client().getLifecycle(name)).map((r) => r.id)).toEqual(["tmp"]);
  });

  it("without s3:PutBucketTagging: the bucket is made, the tags and owner mark are S3AccessDenied, written once granted", async () => {
    const name = unique("notag");
    const user = await useUserWithout("s3:PutBucketTagging");
    await buckets.create("notag", { name, tags: { team: "vision" } });
    const held = await buckets.waitForCondition(
      "notag",
      "Synced",
      "False",
      "S3AccessDenied",
      30_000,
    );
    expect(conditionOf(held, "Synced")?.message).toContain(
      `the S3 credentials need s3:PutBucketTagging on bucket ${name}`,
    );
    expect(await s3.client().headBucket(name)).toBe("Present");
    await user.setPolicy(allS3But());
    await buckets.waitForCondition("notag", "Synced", "True", undefined, 30_000);
    const tags = await s3.client().getTags(name);
    expect(tags.team).toBe("vision");
    expect(tags[OWNER_TAG]).toBeDefined();
  });

  it("without s3:DeleteObject: forceDestroy is S3AccessDenied naming the actions, keeps bucket, data and finalizer, and deletes once granted", async () => {
    const name = unique("nodelete");
    await buckets.create("nodelete", { name, deletionPolicy: "Delete", forceDestroy: true });
    await buckets.waitForCondition("nodelete", "Ready", "True", "Available", 30_000);
    await s3.sdk().send(new PutObjectCommand({ Bucket: name, Key: "k", Body: "x" }));
    const user = await useUserWithout("s3:DeleteObject");
    await buckets.delete("nodelete");
    const held = await buckets.waitFor(
      "nodelete",
      (o) => conditionOf(o, "Synced")?.reason === "S3AccessDenied",
      30_000,
    );
    expect(conditionOf(held, "Synced")?.message).toContain(
      `the S3 credentials need s3:DeleteObject and s3:DeleteObjectVersion on bucket ${name}`,
    );
    expect(held.metadata?.finalizers).toContain("aidc.io/bucket");
    expect(await s3.client().countObjectVersions(name)).toEqual({ count: 1, more: false });
    await user.setPolicy(allS3But());
    await buckets.waitForGone("nodelete", 30_000);
    expect(await s3.client().headBucket(name)).toBe("Absent");
  });

  it("with just the actions object-storage.md lists: a Bucket with every feature MinIO has is made, kept and force-destroyed", async () => {
    const page = readFileSync(join(repoRoot, "docs", "object-storage.md"), "utf8");
    const paragraph =
      page.slice(page.indexOf("The key pair's policy needs")).split("\n\n")[0] ?? "";
    const actions = [...new Set([...paragraph.matchAll(/`(s3:\w+)`/g)].map((m) => m[1] as string))];
    expect(actions).toContain("s3:DeleteObjectVersion");
    await useUser({
      Version: "2012-10-17",
      Statement: [{ Effect: "Allow", Action: actions, Resource: ["arn:aws:s3:::*"] }],
    });
    const name = unique("least");
    await buckets.create("least", {
      name,
      versioning: "Enabled",
      lifecycleRules: [{ id: "tmp", prefix: "tmp/", expirationDays: 7 }],
      policy: JSON.stringify({
        Version: "2012-10-17",
        Statement: [
          {
            Effect: "Allow",
            Principal: "*",
            Action: "s3:GetObject",
            Resource: `arn:aws:s3:::${name}/public/*`,
          },
        ],
      }),
      tags: { team: "vision" },
      deletionPolicy: "Delete",
      forceDestroy: true,
    });
    const ready = await buckets.waitForCondition("least", "Ready", "True", "Available", 30_000);
    expect(conditionOf(ready, "Synced")).toMatchObject({ status: "True" });
    expect(ready.status).toMatchObject({
      versioning: "Enabled",
      lifecycleRules: 1,
      policy: true,
      tags: 2,
    });
    await s3.sdk().send(new PutObjectCommand({ Bucket: name, Key: "tmp/k", Body: "x" }));
    await buckets.delete("least");
    await buckets.waitForGone("least", 30_000);
    expect(await s3.client().headBucket(name)).toBe("Absent");
  });
});
