/**
 * A Bucket whose object storage comes from its ServiceConnection (spec.objectStorage
 * and the S3 credentials Secret), on the real API server and a real S3 server (MinIO):
 * created with the connection's keys, and after the keys are rotated at the server,
 * held with S3CredentialsRefused until the connection's Secret holds the new pair,
 * which is then used without a restart. No key reaches a log line, Event or status.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bucketController } from "../../src/controllers/bucket/controller.js";
import { serviceConnectionController } from "../../src/controllers/connections/controller.js";
import { SECRETS } from "../../src/controllers/connections/secrets.js";
import { bucketCrd } from "../../src/crds/bucket.js";
import { serviceConnectionCrd } from "../../src/crds/serviceconnection.js";
import { SecretRedactor } from "../../src/runtime/outbound-guards.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { capturedLog } from "../support/captured-log.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { conditionOf, EVENTS, ObjectsOf } from "../support/managed.js";
import { startTestOperator, TEST_API_KEY, type TestOperator } from "../support/operator.js";
import { startTestS3, type TestS3 } from "../support/s3.js";

const b64 = (s: string) => Buffer.from(s).toString("base64");

describe("a Bucket on its ServiceConnection's object storage", () => {
  let s3: TestS3;
  let op: TestOperator;
  let ops = "";
  let team = "";
  let conn = "";
  let buckets: ObjectsOf;
  const keys: string[] = [];
  const redactor = new SecretRedactor();
  const { log, lines } = capturedLog(redactor);
  const s3Secret = (accessKeyId: string, secretAccessKey: string) => ({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "s3-keys", namespace: ops },
    data: { accessKeyId: b64(accessKeyId), secretAccessKey: b64(secretAccessKey) },
  });

  beforeAll(async () => {
    s3 = await startTestS3();
    keys.push(s3.server.accessKeyId, s3.server.secretAccessKey);
    const kc = adminKubeConfig();
    [ops, team] = await Promise.all([
      createNamespace(kc, "bkt-ops"),
      createNamespace(kc, "bkt-team"),
    ]);
    conn = `${team}-account`;
    // No objectStorage in the operator's config: the connection is the only source.
    op = await startTestOperator({
      controllers: [bucketController, serviceConnectionController],
      namespaces: [team],
      config: {
        connections: { secretNamespace: ops },
        holdBackoff: { baseMs: 500, maxMs: 1_000 },
      },
      log,
      redactor,
    });
    await op.kube.create(SECRETS, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "api-key", namespace: ops },
      data: { apiKey: b64(TEST_API_KEY) },
    });
    await op.kube.create(SECRETS, s3Secret(s3.server.accessKeyId, s3.server.secretAccessKey));
    await op.kube.create(serviceConnectionCrd, {
      apiVersion: "aidc.io/v1alpha1",
      kind: "ServiceConnection",
      metadata: { name: conn },
      spec: {
        baseUrl: op.emulator.url,
        allowInsecureHttp: true,
        apiKeySecretRef: { namespace: ops, name: "api-key", key: "apiKey" },
        objectStorage: {
          endpoint: s3.server.url,
          credentialsSecretRef: { namespace: ops, name: "s3-keys" },
        },
        allowedNamespaces: { names: [team] },
      },
    });
    buckets = new ObjectsOf(op.kube, bucketCrd, team);
  }, 120_000);

  afterAll(async () => {
    // The operator stops first: running, it puts the connection's finalizer back while
    // the Bucket that uses it is still being deleted, and the connection stays behind.
    await op?.stop();
    const kube = op?.kube;
    const released = [
      { res: bucketCrd, key: { namespace: team, name: "models" } },
      { res: serviceConnectionCrd, key: { namespace: "", name: conn } },
    ];
    for (const { res, key } of released) {
      await kube?.patch(res, key, { metadata: { finalizers: null } }).catch(() => undefined);
      await kube?.delete(res, key).catch(() => undefined);
    }
    await s3?.stop();
  });

  it("creates the bucket with the connection's endpoint and keys", async () => {
    const name = `models-${team.split("-").pop()}`;
    await buckets.create("models", { name, connectionRef: { name: conn }, tags: { v: "1" } });
    const obj = await buckets.waitForCondition("models", "Ready", "True", "Available", 30_000);
    expect(obj.status).toMatchObject({ bucketName: name, endpoint: `${s3.server.url}/${name}` });
    expect((await s3.client().getTags(name)).v).toBe("1");
  });

  it("uses a key pair rotated in the connection's Secret, without a restart", async () => {
    const name = `models-${team.split("-").pop()}`;
    const accessKeyId = `conn-rotated-${Date.now()}`;
    const secretAccessKey = `conn-rotated-secret-${Math.random().toString(36).slice(2)}`;
    keys.push(accessKeyId, secretAccessKey);
    await s3.server.restartWithKeys(accessKeyId, secretAccessKey);
    await buckets.patchSpec("models", { tags: { v: "2" } });
    await buckets.waitForCondition("models", "Synced", "False", "S3CredentialsRefused", 30_000);
    await op.kube.patch(
      SECRETS,
      { namespace: ops, name: "s3-keys" },
      { data: s3Secret(accessKeyId, secretAccessKey).data },
    );
    await buckets.waitFor(
      "models",
      (o) =>
        conditionOf(o, "Synced")?.status === "True" && conditionOf(o, "Ready")?.status === "True",
      30_000,
    );
    expect((await s3.client().getTags(name)).v).toBe("2");
  });

  it("writes neither key pair into a log line, an Event or a status", async () => {
    const { items: events } = await op.kube.list<KubeObject>(EVENTS, team);
    const { items: objects } = await op.kube.list<KubeObject>(bucketCrd, team);
    expect(lines.length).toBeGreaterThan(10);
    const everything = [...lines, JSON.stringify(events), JSON.stringify(objects)].join("\n");
    for (const key of keys) expect(everything).not.toContain(key);
  });
});
