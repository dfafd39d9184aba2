/**
 * Steering a Bucket, whose remote resource is an S3 bucket rather than the service's,
 * on the real API server against a real S3 server: aidc.io/paused (a spec change is not
 * applied and a deletion waits until resumed) and aidc.io/reconcile-requested-at (read
 * at once, echoed in status.lastHandledReconcileAt), as on every managed kind.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bucketController } from "../../src/controllers/bucket/controller.js";
import { bucketCrd } from "../../src/crds/bucket.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";
import { startTestS3, type TestS3 } from "../support/s3.js";

let s3: TestS3;
let op: TestOperator;
let ns = "";
let buckets: ObjectsOf;

beforeAll(async () => {
  s3 = await startTestS3();
  ns = await createNamespace(adminKubeConfig(), "steer-bucket");
  op = await startTestOperator({
    controllers: [bucketController],
    namespaces: [ns],
    pollIntervalMs: 500,
    config: { objectStorage: s3.config },
  });
  buckets = new ObjectsOf(op.kube, bucketCrd, ns);
}, 120_000);

afterAll(async () => {
  await op?.stop();
  await s3?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const statusOf = (o: KubeObject) => (o.status ?? {}) as Record<string, unknown>;

describe("a paused Bucket", () => {
  it("applies no spec change and holds its deletion until resumed", async () => {
    const name = `held-${ns.split("-").pop()}`;
    await buckets.create("held", { name, deletionPolicy: "Delete" });
    await buckets.waitForCondition("held", "Ready", "True", "Available", 30_000);
    await buckets.annotate("held", { "aidc.io/paused": "true" });
    await buckets.waitForCondition("held", "Synced", "False", "ReconcilePaused");
    await buckets.patchSpec("held", { versioning: "Enabled" });
    await sleep(2_000);
    const client = s3.client();
    expect(await client.getVersioning(name)).not.toBe("Enabled");
    await buckets.delete("held");
    await sleep(1_500);
    expect(await buckets.get("held")).toBeDefined();
    expect(await client.headBucket(name)).toBe("Present");
    await buckets.annotate("held", { "aidc.io/paused": null });
    await buckets.waitForGone("held", 30_000);
    expect(await client.headBucket(name)).toBe("Absent");
  });
});

describe("aidc.io/reconcile-requested-at on a Bucket", () => {
  it("reads the bucket at once and echoes the value in status", async () => {
    const name = `asked-${ns.split("-").pop()}`;
    await buckets.create("asked", { name });
    await buckets.waitForCondition("asked", "Ready", "True", "Available", 30_000);
    await buckets.annotate("asked", { "aidc.io/reconcile-requested-at": "now-1" });
    const o = await buckets.waitFor("asked", (x) => statusOf(x).lastHandledReconcileAt === "now-1");
    expect(conditionOf(o, "Synced")?.status).toBe("True");
  });
});
