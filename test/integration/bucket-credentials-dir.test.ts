/**
 * The default connection's S3 credentials mounted as files, under `aidc-operator run`
 * (its wiring, not the test operator's), on the real API server and MinIO's STS:
 * temporary credentials that expired hold a Bucket with S3CredentialsRefused naming the
 * files; fresh ones written there are noticed within objectStorage.credentialsRefreshMs
 * and lift the hold, though no request reads the files meanwhile and the hold backoff
 * is far beyond the test. No key or token reaches the operator's log.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bucketController } from "../../src/controllers/bucket/controller.js";
import { bucketCrd } from "../../src/crds/bucket.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import { KubeClient } from "../../src/runtime/kube.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { linesInto } from "../support/captured-log.js";
import { installCrds } from "../support/crds.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import { addMinioUser, allS3But, assumeRole, revokeTokens } from "../support/minio-iam.js";
import { TEST_API_KEY } from "../support/operator.js";
import { runInProcessWith } from "../support/run-operator.js";
import { startTestS3, type TestS3 } from "../support/s3.js";

describe("the default connection's mounted S3 credentials", () => {
  const kc = adminKubeConfig();
  let emulator: RunningEmulator;
  let s3: TestS3;

  beforeAll(async () => {
    await installCrds(kc);
    emulator = await startEmulator({ apiKey: TEST_API_KEY });
    s3 = await startTestS3();
  });
  afterAll(async () => {
    await s3?.stop();
    await emulator?.stop();
  });

  it("notices fresh temporary credentials within credentialsRefreshMs and lifts the hold of the Bucket expired ones stopped", async () => {
    const namespace = await createNamespace(kc, "bucket-sts-dir");
    const user = await addMinioUser(s3.server, allS3But());
    const first = await assumeRole(s3.server, user, "first");
    await s3.writeCredentials(first.accessKeyId, first.secretAccessKey, first.sessionToken);
    const lines: string[] = [];
    const op = await runInProcessWith(
      {
        service: { baseUrl: emulator.url, allowInsecureHttp: true },
        objectStorage: s3.config,
        watchNamespaces: [namespace],
        // Only the credentials' change can bring the Bucket back within the test.
        holdBackoff: { baseMs: 120_000, maxMs: 120_000 },
        resyncPeriodMs: 0,
        server: { port: 0, host: "127.0.0.1" },
        log: { level: "debug" },
      },
      {
        controllerFactories: [bucketController],
        env: { AIDC_API_KEY: TEST_API_KEY },
        logDestination: linesInto(lines),
      },
    );
    const keys = [first.accessKeyId, first.secretAccessKey, first.sessionToken];
    try {
      const buckets = new ObjectsOf(new KubeClient(kc), bucketCrd, namespace);
      const name = `sts-${namespace}`;
      await buckets.create("sts", { name, tags: { v: "1" } });
      await buckets.waitForCondition("sts", "Ready", "True", "Available", 30_000);
      // Revoked: MinIO refuses them as it refuses expired ones.
      await revokeTokens(s3.server, user, "first");
      await buckets.patchSpec("sts", { tags: { v: "2" } });
      const held = await buckets.waitForCondition(
        "sts",
        "Synced",
        "False",
        "S3CredentialsRefused",
        30_000,
      );
      expect(conditionOf(held, "Synced")?.message).toContain(
        `the S3 credentials of the files of objectStorage.credentialsDir ${s3.credentialsDir} were refused with their session token`,
      );
      const second = await assumeRole(s3.server, user, "second");
      keys.push(second.accessKeyId, second.secretAccessKey, second.sessionToken);
      const written = Date.now();
      await s3.writeCredentials(second.accessKeyId, second.secretAccessKey, second.sessionToken);
      const back = await buckets.waitFor(
        "sts",
        (o: KubeObject) =>
          conditionOf(o, "Synced")?.status === "True" &&
          conditionOf(o, "Synced")?.observedGeneration === o.metadata?.generation,
        10_000,
      );
      expect(conditionOf(back, "Ready")?.status).toBe("True");
      // One refresh interval (200 ms) plus a reconcile; the hold backoff is 2 min.
      expect(Date.now() - written).toBeLessThan(5_000);
      expect((await s3.client().getTags(name)).v).toBe("2");
    } finally {
      expect(await op.stop()).toBe(0);
    }
    expect(lines.join("")).toContain("the S3 credentials changed");
    for (const key of keys) expect(lines.join("")).not.toContain(key);
  });
});
