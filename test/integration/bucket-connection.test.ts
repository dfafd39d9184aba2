/**
 * A Bucket whose object storage comes from its ServiceConnection (spec.objectStorage
 * and the S3 credentials Secret), on the real API server and a real S3 server (MinIO):
 * created with the connection's keys, and after the keys are rotated at the server,
 * held with S3CredentialsRefused until the connection's Secret holds the new pair,
 * which is then used without a restart. Temporary credentials from MinIO's STS
 * (AssumeRole): refused without their session token, Ready with it, rotated in the
 * Secret and used at the next call, and, revoked as expired ones are, held with
 * S3CredentialsRefused naming the Secret until fresh ones are written there; exported
 * with the token. No key or token reaches a log line, Event, status or the error of a
 * refused call.
 */
import { inspect } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bucketController } from "../../src/controllers/bucket/controller.js";
import { serviceConnectionController } from "../../src/controllers/connections/controller.js";
import { SECRETS } from "../../src/controllers/connections/secrets.js";
import { bucketCrd } from "../../src/crds/bucket.js";
import { serviceConnectionCrd } from "../../src/crds/serviceconnection.js";
import { SecretRedactor } from "../../src/runtime/outbound-guards.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { ObjectStorageClient } from "../../src/service/object-storage.js";
import { capturedLog } from "../support/captured-log.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { conditionOf, EVENTS, ObjectsOf } from "../support/managed.js";
import {
  addMinioUser,
  allS3But,
  assumeRole,
  type MinioUser,
  revokeTokens,
  type TemporaryCredentials,
} from "../support/minio-iam.js";
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
  const connection = (name: string, secret: string, exportCredentials?: true) => ({
    apiVersion: "aidc.io/v1alpha1",
    kind: "ServiceConnection",
    metadata: { name },
    spec: {
      baseUrl: op.emulator.url,
      allowInsecureHttp: true,
      apiKeySecretRef: { namespace: ops, name: "api-key", key: "apiKey" },
      objectStorage: {
        endpoint: s3.server.url,
        credentialsSecretRef: { namespace: ops, name: secret },
        ...(exportCredentials ? { exportCredentials } : {}),
      },
      allowedNamespaces: { names: [team] },
    },
  });
  // Temporary credentials: a connection of their own, on the Secret s3-sts.
  let stsConn = "";
  let stsUser: MinioUser;
  const temporary = async (batch: string) => {
    const t = await assumeRole(s3.server, stsUser, batch);
    keys.push(t.accessKeyId, t.secretAccessKey, t.sessionToken);
    return t;
  };
  const writeSts = (t: Omit<TemporaryCredentials, "expiration" | "sessionToken">, token?: string) =>
    op.kube.patch(
      SECRETS,
      { namespace: ops, name: "s3-sts" },
      {
        data: {
          accessKeyId: b64(t.accessKeyId),
          secretAccessKey: b64(t.secretAccessKey),
          sessionToken: token ? b64(token) : null,
        },
      },
    );
  const stsBucket = () => `staged-${team.split("-").pop()}`;
  /** The data of the Bucket's exported Secret once it holds the session token `token`. */
  const exportedWith = (token: string) =>
    eventually(async () => {
      const secret = await op.kube.get<KubeObject & { data?: Record<string, string> }>(SECRETS, {
        namespace: team,
        name: "staged-s3",
      });
      return secret?.data?.AWS_SESSION_TOKEN === b64(token) ? secret.data : undefined;
    }, 20_000);
  /** Synced and Ready, Synced for the object's current generation (not an older spec's). */
  const settled = (o: KubeObject) =>
    conditionOf(o, "Synced")?.status === "True" &&
    conditionOf(o, "Synced")?.observedGeneration === o.metadata?.generation &&
    conditionOf(o, "Ready")?.status === "True";
  const tagsAt = async (name: string) => (await s3.client().getTags(name)).v;

  beforeAll(async () => {
    s3 = await startTestS3();
    keys.push(s3.server.accessKeyId, s3.server.secretAccessKey);
    const kc = adminKubeConfig();
    [ops, team] = await Promise.all([
      createNamespace(kc, "bkt-ops"),
      createNamespace(kc, "bkt-team"),
    ]);
    conn = `${team}-account`;
    // No object storage endpoint in the operator's config: the connections are the only
    // source. Exporting credentials is on (the connection of s3-sts allows it).
    op = await startTestOperator({
      controllers: [bucketController, serviceConnectionController],
      namespaces: [team],
      config: {
        connections: { secretNamespace: ops },
        objectStorage: { exportCredentials: true },
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
    await op.kube.create(serviceConnectionCrd, connection(conn, "s3-keys"));
    buckets = new ObjectsOf(op.kube, bucketCrd, team);
    stsUser = await addMinioUser(s3.server, allS3But());
    keys.push(stsUser.secretAccessKey);
    await op.kube.create(SECRETS, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "s3-sts", namespace: ops },
      data: {},
    });
    stsConn = `${team}-sts`;
    await op.kube.create(serviceConnectionCrd, connection(stsConn, "s3-sts", true));
  }, 120_000);

  afterAll(async () => {
    // The operator stops first: running, it puts the connection's finalizer back while
    // the Bucket that uses it is still being deleted, and the connection stays behind.
    await op?.stop();
    const kube = op?.kube;
    const released = [
      { res: bucketCrd, key: { namespace: team, name: "models" } },
      { res: bucketCrd, key: { namespace: team, name: "staged" } },
      { res: serviceConnectionCrd, key: { namespace: "", name: conn } },
      { res: serviceConnectionCrd, key: { namespace: "", name: stsConn } },
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

  it("refuses temporary credentials without their session token, naming the Secret", async () => {
    const first = await temporary("first");
    await writeSts(first);
    await buckets.create("staged", {
      name: stsBucket(),
      connectionRef: { name: stsConn },
      tags: { v: "1" },
      exportTo: { secretName: "staged-s3" },
    });
    const held = await buckets.waitForCondition(
      "staged",
      "Ready",
      "False",
      "S3CredentialsRefused",
      30_000,
    );
    expect(conditionOf(held, "Ready")?.message).toContain(
      `the S3 credentials of the Secret ${ops}/s3-sts have no session token`,
    );
  });

  it("creates the bucket with temporary credentials once the Secret holds their session token", async () => {
    const first = await temporary("first");
    const at = Date.now();
    await writeSts(first, first.sessionToken);
    await buckets.waitForCondition("staged", "Ready", "True", "Available", 30_000);
    // The connection's Secret watch retries its objects at once, not on the hold backoff.
    expect(Date.now() - at).toBeLessThan(10_000);
    expect(await tagsAt(stsBucket())).toBe("1");
    const exported = await exportedWith(first.sessionToken);
    expect(exported.AWS_ACCESS_KEY_ID).toBe(b64(first.accessKeyId));
  });

  it("uses temporary credentials rotated in the Secret at the next call", async () => {
    const second = await temporary("second");
    await writeSts(second, second.sessionToken);
    // The first batch is gone at the server: only the rotated credentials still work.
    await revokeTokens(s3.server, stsUser, "first");
    await buckets.patchSpec("staged", { tags: { v: "2" } });
    await eventually(async () => ((await tagsAt(stsBucket())) === "2" ? true : undefined), 20_000);
    // The exported Secret follows the rotation.
    expect((await exportedWith(second.sessionToken)).AWS_ACCESS_KEY_ID).toBe(
      b64(second.accessKeyId),
    );
  });

  it("holds a Bucket whose temporary credentials expired with S3CredentialsRefused naming the Secret, until fresh ones are written there", async () => {
    // Revoked: MinIO refuses them as it refuses expired ones (InvalidAccessKeyId).
    await revokeTokens(s3.server, stsUser, "second");
    await buckets.patchSpec("staged", { tags: { v: "3" } });
    const held = await buckets.waitForCondition(
      "staged",
      "Synced",
      "False",
      "S3CredentialsRefused",
      30_000,
    );
    expect(conditionOf(held, "Synced")?.message).toContain(
      `the S3 credentials of the Secret ${ops}/s3-sts were refused with their session token: temporary ones expired or revoked`,
    );
    const third = await temporary("third");
    const at = Date.now();
    await writeSts(third, third.sessionToken);
    await buckets.waitFor("staged", settled, 30_000);
    expect(Date.now() - at).toBeLessThan(10_000);
    expect(await tagsAt(stsBucket())).toBe("3");
  });

  it("puts no key or session token into the error of a refused call, however it is read", async () => {
    const t = await temporary("inspected");
    await revokeTokens(s3.server, stsUser, "inspected");
    const client = new ObjectStorageClient({
      endpoint: s3.server.url,
      region: s3.server.region,
      credentials: async () => t,
      credentialsSource: `the Secret ${ops}/s3-sts`,
    });
    const errors: unknown[] = [];
    const name = stsBucket();
    for (const call of [
      () => client.headBucket(name),
      () => client.getTags(name),
      () => client.createBucket(`${name}-x`),
    ]) {
      await call().catch((err: unknown) => errors.push(err));
    }
    client.close();
    expect(errors).toHaveLength(3);
    for (const err of errors) {
      const e = err as Error;
      expect(e.message).toContain("refused with their session token");
      const read = [e.message, e.stack, String(e.cause), inspect(err, { depth: 8 })];
      const text = [...read, JSON.stringify(err)].join("\n");
      for (const key of [t.accessKeyId, t.secretAccessKey, t.sessionToken]) {
        expect(text).not.toContain(key);
      }
    }
  });

  it("uses a key pair rotated in the connection's Secret, without a restart", async () => {
    const name = `models-${team.split("-").pop()}`;
    const accessKeyId = `conn-rotated-${Date.now()}`;
    const secretAccessKey = `conn-rotated-secret-${Math.random().toString(36).slice(2)}`;
    keys.push(accessKeyId, secretAccessKey);
    await s3.server.restartWithKeys(accessKeyId, secretAccessKey);
    const generation = (await buckets.patchSpec("models", { tags: { v: "2" } })).metadata
      ?.generation;
    // At the new spec's generation: a poll of the old one may be refused first, and the
    // rotation then make that one Synced before the spec's change is seen.
    const at = (o: KubeObject, type: string) => {
      const c = conditionOf(o, type);
      return c?.observedGeneration === generation ? c : undefined;
    };
    await buckets.waitFor(
      "models",
      (o) => at(o, "Synced")?.reason === "S3CredentialsRefused",
      30_000,
    );
    await op.kube.patch(
      SECRETS,
      { namespace: ops, name: "s3-keys" },
      { data: s3Secret(accessKeyId, secretAccessKey).data },
    );
    await buckets.waitFor(
      "models",
      (o) => at(o, "Synced")?.status === "True" && at(o, "Ready")?.status === "True",
      30_000,
    );
    expect((await s3.client().getTags(name)).v).toBe("2");
  });

  it("writes no key pair or session token into a log line, an Event or a status", async () => {
    const { items: events } = await op.kube.list<KubeObject>(EVENTS, team);
    const { items: objects } = await op.kube.list<KubeObject>(bucketCrd, team);
    expect(lines.length).toBeGreaterThan(10);
    const everything = [...lines, JSON.stringify(events), JSON.stringify(objects)].join("\n");
    for (const key of keys) expect(everything).not.toContain(key);
  });
});
