/**
 * What the routine polls of Buckets send to the object storage (the project's S3 server,
 * MinIO, behind test/support/s3-front.ts, which counts the requests): many Buckets of
 * one connection share one read of the account's bucket list per poll interval.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bucketController } from "../../src/controllers/bucket/controller.js";
import { bucketCrd } from "../../src/crds/bucket.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { ObjectsOf } from "../support/managed.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";
import { startTestS3, type TestS3 } from "../support/s3.js";
import { S3Front } from "../support/s3-front.js";

const POLL_MS = 1_000;
const BUCKETS = 20;

describe("the routine polls of Buckets", () => {
  let s3: TestS3;
  let front: S3Front;
  let op: TestOperator;
  let buckets: ObjectsOf;
  let namespace = "";
  const unique = (base: string) => `${base}-${namespace.split("-").pop()}`;

  beforeAll(async () => {
    s3 = await startTestS3();
    front = await new S3Front(s3.server.url, []).start();
    namespace = await createNamespace(adminKubeConfig(), "bucket-polls");
    op = await startTestOperator({
      controllers: [(deps) => bucketController(deps, { visibilityGraceMs: 2_000 })],
      namespaces: [namespace],
      pollIntervalMs: POLL_MS,
      config: { objectStorage: { ...s3.config, endpoint: front.url } },
    });
    buckets = new ObjectsOf(op.kube, bucketCrd, namespace);
  }, 120_000);

  afterAll(async () => {
    await op?.stop();
    await front?.stop();
    await s3?.stop();
  });

  /** The requests `front` saw while `run` ran, by kind. */
  async function counted(run: () => Promise<void>) {
    const from = front.seen.length;
    await run();
    const seen = front.seen.slice(from);
    return {
      lists: seen.filter((r) => /^GET \/(\?|$)/.test(r)).length,
      heads: seen.filter((r) => r.startsWith("HEAD ")).length,
    };
  }

  it(`of ${BUCKETS} Buckets of one connection read the account's bucket list about once per poll interval, not once per Bucket`, async () => {
    const names = Array.from({ length: BUCKETS }, (_, i) => `p${i}`);
    await Promise.all(names.map((n) => buckets.create(n, { name: unique(n) })));
    for (const n of names) await buckets.waitForCondition(n, "Ready", "True", "Available", 60_000);
    const intervals = 5;
    const { lists, heads } = await counted(
      () => new Promise((resolve) => setTimeout(resolve, intervals * POLL_MS)),
    );
    // Every Bucket was polled (a HEAD each) more than once: one list per poll was 89 here.
    expect(heads).toBeGreaterThanOrEqual(BUCKETS * 2);
    expect(lists).toBeLessThanOrEqual(intervals + 2);
  });
});
