import {
  DeleteObjectCommand,
  PutBucketLifecycleConfigurationCommand,
  PutObjectCommand,
} from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bucketController } from "../../src/controllers/bucket/controller.js";
import { OWNER_TAG } from "../../src/controllers/bucket/features.js";
import { ANNOTATIONS } from "../../src/controllers/managed/decisions.js";
import { CONFIG_MAPS } from "../../src/controllers/managed/export.js";
import { trainingJobController } from "../../src/controllers/trainingjob/controller.js";
import { bucketCrd } from "../../src/crds/bucket.js";
import { trainingJobCrd } from "../../src/crds/trainingjob.js";
import { SecretRedactor } from "../../src/runtime/outbound-guards.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { capturedLog } from "../support/captured-log.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { conditionOf, EVENTS, ObjectsOf } from "../support/managed.js";
import { addMinioUser, allS3But, assumeRole } from "../support/minio-iam.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";
import { startTestS3, type TestS3 } from "../support/s3.js";

const POLICY = (bucket: string) =>
  JSON.stringify({
    Version: "2012-10-17",
    Statement: [
      {
        Effect: "Allow",
        Principal: "*",
        Action: "s3:GetObject",
        Resource: `arn:aws:s3:::${bucket}/public/*`,
      },
    ],
  });

/** The Bucket controller against a real S3 server (MinIO) and a real API server. */
describe("Bucket controller", () => {
  let s3: TestS3;
  let op: TestOperator;
  let buckets: ObjectsOf;
  let namespace = "";
  const firstKeys: string[] = [];
  const redactor = new SecretRedactor();
  const { log, lines } = capturedLog(redactor);
  const sdk = () => s3.sdk();
  /** A bucket name unique to this run (bucket names are global to the server). */
  const unique = (base: string) => `${base}-${namespace.split("-").pop()}`;

  beforeAll(async () => {
    s3 = await startTestS3();
    firstKeys.push(s3.server.accessKeyId, s3.server.secretAccessKey);
    namespace = await createNamespace(adminKubeConfig(), "bucket");
    op = await startTestOperator({
      controllers: [
        (deps) => bucketController(deps, { visibilityGraceMs: 2_000 }),
        trainingJobController,
      ],
      namespaces: [namespace],
      config: { objectStorage: s3.config, holdBackoff: { baseMs: 500, maxMs: 1_000 } },
      log,
      redactor,
    });
    buckets = new ObjectsOf(op.kube, bucketCrd, namespace);
  }, 120_000);

  afterAll(async () => {
    await op?.stop();
    await s3?.stop();
  });

  it("creates a bucket with versioning, lifecycle rules, a policy and tags, and reads them back", async () => {
    const name = unique("data");
    await buckets.create("data", {
      name,
      versioning: "Enabled",
      lifecycleRules: [
        { id: "tmp", prefix: "tmp/", expirationDays: 7 },
        { id: "old-versions", noncurrentVersionExpirationDays: 30 },
      ],
      policy: POLICY(name),
      tags: { team: "vision" },
      exportTo: { configMapName: "data-bucket" },
    });
    const obj = await buckets.waitForCondition("data", "Ready", "True", "Available", 30_000);
    // The connection details for workloads, never a credential.
    const exported = await eventually(async () => {
      const cm = await op.kube.get<KubeObject & { data?: Record<string, string> }>(CONFIG_MAPS, {
        namespace,
        name: "data-bucket",
      });
      return cm?.data?.BUCKET_REGION ? cm : undefined;
    });
    expect(exported.data).toEqual({
      BUCKET_NAME: name,
      BUCKET_ENDPOINT: `${s3.server.url}/${name}`,
      BUCKET_REGION: "us-east-1",
    });
    expect(exported.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: "Bucket", uid: obj.metadata?.uid, controller: true }),
    ]);
    expect(conditionOf(obj, "Synced")).toMatchObject({ status: "True" });
    const status = obj.status as Record<string, unknown>;
    expect(status).toMatchObject({
      bucketName: name,
      endpoint: `${s3.server.url}/${name}`,
      region: "us-east-1",
      versioning: "Enabled",
      lifecycleRules: 2,
      policy: true,
      tags: 2,
    });
    expect(Date.parse(String(status.creationTime))).toBeGreaterThan(Date.now() - 120_000);
    expect(status.lastApplied).toMatchObject({ drift: false });
    // The server re-spells the policy; read back it still matches the spec, so the
    // following polls (500 ms) change nothing.
    await new Promise((r) => setTimeout(r, 2_000));
    const later = (await buckets.get("data"))?.status as Record<string, unknown>;
    expect(later.lastApplied).toEqual(status.lastApplied);
    expect(obj.metadata?.finalizers).toContain("aidc.io/bucket");
    // Read back with a client of our own, as anyone outside the cluster would.
    const c = s3.client();
    expect(await c.getVersioning(name)).toBe("Enabled");
    expect(await c.getLifecycle(name)).toEqual(
      expect.arrayContaining([
        { id: "tmp", prefix: "tmp/", enabled: true, expirationDays: 7 },
        { id: "old-versions", prefix: "", enabled: true, noncurrentVersionExpirationDays: 30 },
      ]),
    );
    const policy = JSON.parse((await c.getPolicy(name)) ?? "{}");
    expect(JSON.stringify(policy)).toContain(`arn:aws:s3:::${name}/public/*`);
    const tags = await c.getTags(name);
    expect(tags.team).toBe("vision");
    expect(tags[OWNER_TAG]).toMatch(/^[0-9a-f]{16}\.[0-9a-f]{16}$/);
    await buckets.waitForEvents("data", ["Created"]);
  });

  it("puts back lifecycle rules, policy and versioning changed outside the cluster, with a Warning event", async () => {
    const name = unique("data");
    const c = s3.client();
    await sdk().send(
      new PutBucketLifecycleConfigurationCommand({
        Bucket: name,
        LifecycleConfiguration: {
          Rules: [
            { ID: "rogue", Filter: { Prefix: "" }, Status: "Enabled", Expiration: { Days: 1 } },
          ],
        },
      }),
    );
    await c.putPolicy(name, undefined);
    await c.putVersioning(name, "Suspended");
    // The three changes are three requests: a poll (every 500 ms) may fall between them
    // and put back some in one reconcile and the rest in the next, each with its event.
    const corrected = await eventually(async () => {
      const { items } = await op.kube.list<KubeObject>(EVENTS, namespace);
      const notes = items
        .filter((e) => e.reason === "DriftCorrected" && e.type === "Warning")
        .map((e) => String(e.note));
      const all = ["versioning Enabled", "lifecycle rules (2)", "bucket policy"];
      return all.every((change) => notes.some((n) => n.includes(change))) ? notes : undefined;
    }, 30_000);
    expect(corrected.join("\n")).toMatch(
      /^changed outside the cluster, put back as the spec says: /,
    );
    // The status records the correction (the Event is emitted before the status write).
    await buckets.waitFor(
      "data",
      (o) => (o.status as { lastApplied?: { drift?: boolean } }).lastApplied?.drift === true,
      30_000,
    );
    expect(await c.getVersioning(name)).toBe("Enabled");
    expect((await c.getLifecycle(name)).map((r) => r.id).sort()).toEqual(["old-versions", "tmp"]);
    expect(await c.getPolicy(name)).toBeDefined();
  });

  it("removes the bucket policy for an empty spec.policy, and leaves it as it is when the field is removed", async () => {
    const name = unique("public");
    await buckets.create("public", { name, policy: POLICY(name) });
    await buckets.waitForCondition("public", "Ready", "True", "Available", 30_000);
    const c = s3.client();
    expect(await c.getPolicy(name)).toBeDefined();
    await buckets.patchSpec("public", { policy: "" });
    await eventually(async () => ((await c.getPolicy(name)) === undefined ? true : undefined));
    await buckets.waitFor("public", (o) => (o.status as { policy?: boolean }).policy === false);
    // A policy set outside while the field is omitted is the bucket's own: left as it is.
    await buckets.patchSpec("public", { policy: null });
    await c.putPolicy(name, POLICY(name));
    await new Promise((r) => setTimeout(r, 2_000));
    expect(await c.getPolicy(name)).toBeDefined();
  });

  it("reports CORS, which the server does not implement, as a condition and applies the rest", async () => {
    const name = unique("web");
    await buckets.create("web", {
      name,
      tags: { app: "web" },
      cors: [{ allowedOrigins: ["https://app.example.com"], allowedMethods: ["GET"] }],
    });
    const obj = await buckets.waitForCondition(
      "web",
      "Synced",
      "False",
      "FeatureNotImplemented",
      30_000,
    );
    expect(conditionOf(obj, "Synced")?.message).toContain("CORS");
    expect(conditionOf(obj, "Ready")).toMatchObject({ status: "True", reason: "Available" });
    expect(conditionOf(obj, "Stalled")).toMatchObject({ status: "True" });
    expect((obj.status as { unsupported?: string[] }).unsupported).toContain("CORS");
    expect((await s3.client().getTags(name)).app).toBe("web");
  });

  it("refuses to delete a bucket that holds objects, with the count, and deletes it once emptied", async () => {
    const name = unique("full");
    await buckets.create("full", { name, deletionPolicy: "Delete" });
    await buckets.waitForCondition("full", "Ready", "True", "Available", 30_000);
    for (const key of ["a", "b", "c"]) {
      await sdk().send(new PutObjectCommand({ Bucket: name, Key: key, Body: "x" }));
    }
    await buckets.delete("full");
    const obj = await buckets.waitForCondition("full", "Ready", "False", "BucketNotEmpty", 30_000);
    expect(conditionOf(obj, "Ready")?.message).toContain("holds 3 objects");
    expect(conditionOf(obj, "Stalled")).toMatchObject({ status: "True" });
    expect(await s3.client().headBucket(name)).toBe("Present");
    await buckets.waitForEvents("full", ["BucketNotEmpty"]);
    for (const key of ["a", "b", "c"]) {
      await sdk().send(new DeleteObjectCommand({ Bucket: name, Key: key }));
    }
    await buckets.waitForGone("full", 30_000);
    expect(await s3.client().headBucket(name)).toBe("Absent");
  });

  it("with forceDestroy deletes every object version and delete marker, then the bucket", async () => {
    const name = unique("scratch");
    await buckets.create("scratch", {
      name,
      versioning: "Enabled",
      deletionPolicy: "Delete",
      forceDestroy: true,
    });
    await buckets.waitForCondition("scratch", "Ready", "True", "Available", 30_000);
    for (const body of ["v1", "v2", "v3"]) {
      await sdk().send(new PutObjectCommand({ Bucket: name, Key: "model.bin", Body: body }));
    }
    await sdk().send(new DeleteObjectCommand({ Bucket: name, Key: "model.bin" }));
    expect(await s3.client().countObjectVersions(name)).toEqual({ count: 4, more: false });
    await buckets.delete("scratch");
    await buckets.waitForGone("scratch", 30_000);
    expect(await s3.client().headBucket(name)).toBe("Absent");
    await eventually(async () => {
      const { items } = await op.kube.list<KubeObject>(EVENTS, namespace);
      return items.find(
        (e) => e.reason === "ObjectsDeleted" && String(e.note).includes("4 object"),
      );
    });
  });

  it("takes no bucket made outside under the name of its own deleted outside: RemoteNotFound, and deleting the Bucket keeps that bucket and its data", async () => {
    const name = unique("reborn");
    const spec = { name, versioning: "Enabled", deletionPolicy: "Delete", forceDestroy: true };
    await buckets.create("reborn", spec);
    await buckets.waitFor(
      "reborn",
      (o) => Boolean((o.status as { creationTime?: string } | undefined)?.creationTime),
      30_000,
    );
    await s3.client().deleteBucket(name);
    await buckets.waitForCondition("reborn", "Ready", "False", "RemoteNotFound", 30_000);
    // Another team's bucket of the same name, made in a later second.
    await new Promise((r) => setTimeout(r, 1_100));
    expect(await s3.client().createBucket(name)).toBe("Created");
    await sdk().send(new PutObjectCommand({ Bucket: name, Key: "theirs", Body: "x" }));
    // Ten polls: none binds it, tags it or turns its versioning on.
    await new Promise((r) => setTimeout(r, 5_000));
    const obj = await buckets.waitForCondition("reborn", "Ready", "False", "RemoteNotFound", 1_000);
    expect(conditionOf(obj, "Ready")?.reason).toBe("RemoteNotFound");
    expect(await s3.client().getTags(name)).toEqual({});
    expect(await s3.client().getVersioning(name)).toBe("Off");
    await buckets.delete("reborn");
    await buckets.waitForGone("reborn", 30_000);
    expect(await s3.client().countObjectVersions(name)).toEqual({ count: 1, more: false });
    await buckets.waitForEvents("reborn", ["DeletePolicyNotHonoured"]);
  });

  it("is released under Delete, with and without forceDestroy, when its bucket was deleted outside", async () => {
    for (const forceDestroy of [true, false]) {
      const name = unique(`outside-${forceDestroy}`);
      const object = `outside-${forceDestroy}`;
      await buckets.create(object, { name, deletionPolicy: "Delete", forceDestroy });
      await buckets.waitForCondition(object, "Ready", "True", "Available", 30_000);
      await s3.client().deleteBucket(name);
      await buckets.delete(object);
      await buckets.waitForGone(object, 30_000);
    }
  });

  it("keeps the bucket and its data under the default Orphan policy", async () => {
    const name = unique("keep");
    await buckets.create("keep", { name });
    await buckets.waitForCondition("keep", "Ready", "True", "Available", 30_000);
    await sdk().send(new PutObjectCommand({ Bucket: name, Key: "k", Body: "x" }));
    await buckets.delete("keep");
    await buckets.waitForGone("keep", 30_000);
    expect(await s3.client().countObjectVersions(name)).toEqual({ count: 1, more: false });
  });

  it("adopts an existing bucket only when spec.adopt is true", async () => {
    const name = unique("legacy");
    const c = s3.client();
    expect(await c.createBucket(name)).toBe("Created");
    await c.putTags(name, { owner: "someone" });
    await buckets.create("legacy", { name });
    const refused = await buckets.waitForCondition(
      "legacy",
      "Ready",
      "False",
      "BucketExistsNotAdopted",
      30_000,
    );
    expect(conditionOf(refused, "Ready")?.message).toContain("spec.adopt");
    expect(refused.status).not.toHaveProperty("bucketName");
    // Not touched: no owner mark, its tags as they were.
    expect(await c.getTags(name)).toEqual({ owner: "someone" });
    await buckets.patchSpec("legacy", { adopt: true, versioning: "Enabled" });
    await buckets.waitForCondition("legacy", "Ready", "True", "Available", 30_000);
    const tags = await c.getTags(name);
    expect(tags.owner).toBe("someone");
    expect(tags[OWNER_TAG]).toBeDefined();
    expect(await c.getVersioning(name)).toBe("Enabled");
    await buckets.waitForEvents("legacy", ["BucketExistsNotAdopted", "Adopted"]);
  });

  it("after a crash between CreateBucket and recording it, takes the bucket its create made, never another's", async () => {
    const c = s3.client();
    // The create went through, the operator died before writing the id: the bucket has
    // no owner mark, and was created after the pending marker (whose create could take
    // effect until its time, for the lookup to end with the window).
    const ours = unique("crashed");
    const pending = (at: Date) =>
      JSON.stringify({ token: "t-crash", at: at.toISOString(), generation: 1, inFlightMs: 0 });
    const marker = pending(new Date(Date.now() - 1_000));
    expect(await c.createBucket(ours)).toBe("Created");
    await buckets.create("crashed", { name: ours }, { [ANNOTATIONS.createPending]: marker });
    await buckets.waitForCondition("crashed", "Ready", "True", "Available", 30_000);
    expect((await c.getTags(ours))[OWNER_TAG]).toMatch(/^[0-9a-f]{16}\.[0-9a-f]{16}$/);
    await buckets.waitForEvents("crashed", ["Recovered"]);
    // A bucket another object's mark claims is not taken: the outcome stays unknown.
    const theirs = unique("claimed");
    expect(await c.createBucket(theirs)).toBe("Created");
    await c.putTags(theirs, { [OWNER_TAG]: "0000000000000000.0000000000000000" });
    await buckets.create("claimed", { name: theirs }, { [ANNOTATIONS.createPending]: marker });
    const claimed = await buckets.waitForCondition(
      "claimed",
      "Ready",
      "False",
      "CreateOutcomeUnknown",
      30_000,
    );
    // Buckets carry no client token: the message names what the bucket is looked up by.
    expect(conditionOf(claimed, "Ready")?.message).toMatch(
      new RegExp(`no remote resource with its bucket name "${theirs}" was listed`),
    );
    expect(await c.getTags(theirs)).toEqual({ [OWNER_TAG]: "0000000000000000.0000000000000000" });
  });

  it("refuses a bucket name that breaks S3's naming rules at apply time, naming the field", async () => {
    for (const bad of ["Upper_Case", "a..b", "192.168.1.1", "xn--abc"]) {
      await expect(buckets.create(`bad-${bad.length}`, { name: bad })).rejects.toThrow(
        /spec\.name|name/,
      );
    }
    await expect(buckets.create("bad-tags", { tags: { "aidc.io/owner": "x" } })).rejects.toThrow(
      /spec\.tags/,
    );
  });

  it("refuses a hand-set aidc.io/external-id that is no bucket name with InvalidRemoteId, sending nothing", async () => {
    for (const [object, id] of [
      ["bad-id-case", "Bad_Name"],
      ["bad-id-path", "../x"],
    ] as const) {
      await buckets.create(object, { deletionPolicy: "Delete" }, { "aidc.io/external-id": id });
      const obj = await buckets.waitForCondition(
        object,
        "Synced",
        "False",
        "InvalidRemoteId",
        30_000,
      );
      expect(conditionOf(obj, "Synced")?.message).toContain("nothing was sent");
      // Its deletion waits on the id too; without the annotation nothing is bound.
      await buckets.delete(object);
      await buckets.waitForCondition(object, "Synced", "False", "InvalidRemoteId", 5_000);
      await buckets.annotate(object, { "aidc.io/external-id": null });
      await buckets.waitForGone(object, 30_000);
    }
    expect(lines.join("\n")).not.toMatch(/S3 HeadBucket of bucket (Bad_Name|\.\.\/x)/);
  });

  it("uses temporary credentials of the mounted Secret with their session token, and holds objects with S3CredentialsRefused without it", async () => {
    const t = await assumeRole(s3.server, await addMinioUser(s3.server, allS3But()));
    firstKeys.push(t.accessKeyId, t.secretAccessKey, t.sessionToken);
    await s3.writeCredentials(t.accessKeyId, t.secretAccessKey);
    await buckets.create("sts", { name: unique("sts") });
    // MinIO answers InvalidTokenId: the credentials, not the object, are at fault.
    const held = await buckets.waitForCondition(
      "sts",
      "Ready",
      "False",
      "S3CredentialsRefused",
      30_000,
    );
    expect(conditionOf(held, "Ready")?.message).toContain(
      `the S3 credentials of the files of objectStorage.credentialsDir ${s3.credentialsDir} have no session token`,
    );
    await s3.writeCredentials(t.accessKeyId, t.secretAccessKey, t.sessionToken);
    await buckets.waitForCondition("sts", "Ready", "True", "Available", 30_000);
    // The root pair again, for the tests that follow.
    await s3.writeCredentials(s3.server.accessKeyId, s3.server.secretAccessKey);
  });

  it("uses rotated credentials from the credentials Secret, and holds objects while they are refused", async () => {
    const name = unique("rotate");
    await buckets.create("rotate", { name, tags: { v: "1" } });
    await buckets.waitForCondition("rotate", "Ready", "True", "Available", 30_000);
    // The server's keys change; the operator still has the old pair.
    const accessKeyId = `rotated${Date.now()}`;
    const secretAccessKey = `rotated-secret-${Math.random().toString(36).slice(2)}xyz`;
    await s3.server.restartWithKeys(accessKeyId, secretAccessKey);
    await buckets.patchSpec("rotate", { tags: { v: "2" } });
    const held = await buckets.waitForCondition(
      "rotate",
      "Synced",
      "False",
      "S3CredentialsRefused",
      30_000,
    );
    expect(conditionOf(held, "Synced")?.message).not.toContain(secretAccessKey);
    // The Secret is updated: the new pair is used without a restart of the operator.
    await s3.writeCredentials(accessKeyId, secretAccessKey);
    await buckets.waitFor(
      "rotate",
      (o) =>
        conditionOf(o, "Synced")?.status === "True" && conditionOf(o, "Ready")?.status === "True",
      30_000,
    );
    expect((await s3.client().getTags(name)).v).toBe("2");
  });

  it("gives a TrainingJob's task the name, endpoint and region of the Buckets in its bucketEnv, once Ready", async () => {
    const jobs = new ObjectsOf(op.kube, trainingJobCrd, namespace);
    await jobs.create("train", {
      image: "registry.example.com/ml/train:1",
      productCode: "train.cpu.16",
      workerCount: 1,
      env: { CKPT_NAME: "from-env" },
      bucketEnv: [{ bucketRef: { name: "ckpt" }, prefix: "CKPT" }],
    });
    await jobs.waitForCondition("train", "ReferencesResolved", "False", "BucketNotFound", 30_000);
    const name = unique("ckpt");
    await buckets.create("ckpt", { name });
    await jobs.waitFor("train", (o) => Boolean((o.status as { taskId?: string })?.taskId), 30_000);
    const creates = (await op.admin.requests({ endpoint: "createTrainingTask" })).filter(
      (r) => (r.body as { image?: string }).image === "registry.example.com/ml/train:1",
    );
    expect(creates).toHaveLength(1);
    expect((creates[0]?.body as { env?: Record<string, string> } | undefined)?.env).toMatchObject({
      CKPT_NAME: name,
      CKPT_ENDPOINT: `${s3.server.url}/${name}`,
      CKPT_REGION: "us-east-1",
    });
  });

  it("never writes an S3 key or session token into a log line, an Event or a status", async () => {
    const secrets = [...firstKeys, s3.server.accessKeyId, s3.server.secretAccessKey];
    const { items: events } = await op.kube.list<KubeObject>(EVENTS, namespace);
    const { items: objects } = await op.kube.list<KubeObject>(bucketCrd, namespace);
    expect(lines.length).toBeGreaterThan(10);
    const everything = [...lines, JSON.stringify(events), JSON.stringify(objects)].join("\n");
    for (const secret of secrets) expect(everything).not.toContain(secret);
  });
});
