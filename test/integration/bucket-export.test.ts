/**
 * A Bucket's spec.exportTo.secretName on the real API server (kube-controller-manager's
 * garbage collector) and a real S3 server (MinIO). With the operator's
 * objectStorage.exportCredentials on: where the ServiceConnection allows it, a Secret
 * owned by the Bucket holds the connection's key pair, which a Pod object's secretKeyRef
 * env reads, and it is deleted when the connection stops allowing it; where the
 * connection does not, nothing is written and Synced and a Warning event say why. With
 * the setting off (the default), no Secret is written whatever the connection says, the
 * condition names the setting (an Observe-only Bucket's too), and the ConfigMap part
 * still works. A renamed secretName deletes the Secret written under the old name (never
 * one the operator did not write), after a restart too; one deleted by hand is written
 * again within 20 polls. No key reaches a log line, an Event or a status.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bucketController } from "../../src/controllers/bucket/controller.js";
import { serviceConnectionController } from "../../src/controllers/connections/controller.js";
import { SECRETS } from "../../src/controllers/connections/secrets.js";
import { ANNOTATIONS } from "../../src/controllers/managed/decisions.js";
import { CONFIG_MAPS, EXPORTED_LABEL } from "../../src/controllers/managed/export.js";
import { bucketCrd } from "../../src/crds/bucket.js";
import { serviceConnectionCrd } from "../../src/crds/serviceconnection.js";
import { KubeClient } from "../../src/runtime/kube.js";
import { SecretRedactor } from "../../src/runtime/outbound-guards.js";
import type { KubeObject, ResourceDescriptor } from "../../src/runtime/resource.js";
import { capturedLog } from "../support/captured-log.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { EVENTS, ObjectsOf } from "../support/managed.js";
import { startTestOperator, TEST_API_KEY, type TestOperator } from "../support/operator.js";
import { startTestS3, type TestS3 } from "../support/s3.js";

const PODS: ResourceDescriptor = {
  group: "",
  version: "v1",
  plural: "pods",
  kind: "Pod",
  namespaced: true,
};

const b64 = (s: string) => Buffer.from(s).toString("base64");
const unb64 = (s: string | undefined) =>
  s === undefined ? undefined : Buffer.from(s, "base64").toString("utf8");

type DataObject = KubeObject & { data?: Record<string, string> };
type EnvVar = { name: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } };
type PodObject = KubeObject & {
  spec: { containers: { name: string; image?: string; env?: EnvVar[] }[] };
};
type EventObject = KubeObject & {
  reason?: string;
  type?: string;
  note?: string;
  regarding?: { name?: string };
};
type Condition = { type: string; status: string; reason?: string; message?: string };

describe("a Bucket's spec.exportTo.secretName", () => {
  let s3: TestS3;
  const admin = new KubeClient(adminKubeConfig());
  let ops = "";
  let team = "";
  let offTeam = "";
  const suffix = `${Date.now().toString(36)}`;
  const allowing = `export-allowed-${suffix}`;
  const refusing = `export-refused-${suffix}`;
  const redactor = new SecretRedactor();
  const { log, lines } = capturedLog(redactor);
  const connection = (
    name: string,
    emulatorUrl: string,
    namespace: string,
    exportCredentials?: boolean,
  ) => ({
    apiVersion: "aidc.io/v1alpha1",
    kind: "ServiceConnection",
    metadata: { name },
    spec: {
      baseUrl: emulatorUrl,
      allowInsecureHttp: true,
      apiKeySecretRef: { namespace: ops, name: "api-key", key: "apiKey" },
      objectStorage: {
        endpoint: s3.server.url,
        credentialsSecretRef: { namespace: ops, name: "s3-keys" },
        ...(exportCredentials === undefined ? {} : { exportCredentials }),
      },
      allowedNamespaces: { names: [namespace] },
    },
  });
  const secretIn = (namespace: string, name: string) =>
    admin.get<DataObject>(SECRETS, { namespace, name });
  const warningsOf = async (namespace: string, name: string) => {
    const { items } = await admin.list<EventObject>(EVENTS, namespace);
    return items.filter(
      (e) => e.reason === "CredentialsExportNotAllowed" && e.regarding?.name === name,
    );
  };
  /** Fails when a key of the pair, raw or base64, is in the Events or objects of `namespace` or in `more`. */
  const expectNoKeyIn = async (namespace: string, more: string[] = []) => {
    const { items: events } = await admin.list<KubeObject>(EVENTS, namespace);
    const { items: objects } = await admin.list<KubeObject>(bucketCrd, namespace);
    expect(objects.length).toBeGreaterThan(0);
    const text = [...more, JSON.stringify(events), JSON.stringify(objects)].join("\n");
    for (const key of [s3.server.accessKeyId, s3.server.secretAccessKey]) {
      expect(text).not.toContain(key);
      expect(text).not.toContain(b64(key));
    }
  };
  const syncedOf = (o: KubeObject) =>
    ((o.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).find(
      (c) => c.type === "Synced",
    );

  beforeAll(async () => {
    s3 = await startTestS3();
    const kc = adminKubeConfig();
    [ops, team, offTeam] = await Promise.all([
      createNamespace(kc, "bkx-ops"),
      createNamespace(kc, "bkx-team"),
      createNamespace(kc, "bkx-off"),
    ]);
    await admin.create(SECRETS, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "api-key", namespace: ops },
      data: { apiKey: b64(TEST_API_KEY) },
    });
    await admin.create(SECRETS, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "s3-keys", namespace: ops },
      data: {
        accessKeyId: b64(s3.server.accessKeyId),
        secretAccessKey: b64(s3.server.secretAccessKey),
      },
    });
  }, 120_000);

  afterAll(async () => {
    for (const c of [allowing, refusing]) {
      await admin
        .patch(serviceConnectionCrd, { namespace: "", name: c }, { metadata: { finalizers: null } })
        .catch(() => undefined);
      await admin.delete(serviceConnectionCrd, { namespace: "", name: c }).catch(() => undefined);
    }
    await s3?.stop();
  });

  describe("with the operator's objectStorage.exportCredentials on", () => {
    let op: TestOperator;
    let buckets: ObjectsOf;
    const secret = (name: string) => secretIn(team, name);

    let restarted: TestOperator | undefined;
    const start = (emulator?: TestOperator["emulator"]) =>
      startTestOperator({
        controllers: [bucketController, serviceConnectionController],
        namespaces: [team],
        config: {
          connections: { secretNamespace: ops },
          objectStorage: { exportCredentials: true },
        },
        log,
        redactor,
        ...(emulator ? { emulator } : {}),
      });

    beforeAll(async () => {
      op = await start();
      await admin.create(serviceConnectionCrd, connection(allowing, op.emulator.url, team, true));
      // exportCredentials omitted: the default, false.
      await admin.create(serviceConnectionCrd, connection(refusing, op.emulator.url, team));
      buckets = new ObjectsOf(admin, bucketCrd, team);
    }, 120_000);

    afterAll(async () => {
      for (const b of ["shared", "private"]) await buckets?.delete(b).catch(() => undefined);
      await restarted?.stop();
      await op?.stop();
    });

    it("writes the key pair into a Secret the Bucket owns when its connection allows it, read by a Pod's secretKeyRef", async () => {
      await buckets.create("shared", {
        name: `shared-${suffix}`,
        connectionRef: { name: allowing },
        exportTo: { configMapName: "shared-bucket", secretName: "shared-bucket-keys" },
      });
      const ready = await buckets.waitForCondition("shared", "Ready", "True", "Available", 30_000);
      const written = await eventually(() => secret("shared-bucket-keys"), 30_000);
      expect(Object.keys(written.data ?? {}).sort()).toEqual([
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
      ]);
      expect(written.metadata?.labels?.[EXPORTED_LABEL]).toBe("bucket");
      expect(written.metadata?.ownerReferences).toEqual([
        expect.objectContaining({
          kind: "Bucket",
          name: "shared",
          uid: ready.metadata?.uid,
          controller: true,
        }),
      ]);
      expect(syncedOf((await buckets.get("shared")) ?? {})?.status).toBe("True");
      // The public part stays in the ConfigMap, the key pair only in the Secret.
      const cm = await eventually(async () => {
        const c = await admin.get<DataObject>(CONFIG_MAPS, {
          namespace: team,
          name: "shared-bucket",
        });
        return c?.data?.BUCKET_NAME ? c : undefined;
      });
      expect(Object.keys(cm.data ?? {}).sort()).toEqual([
        "BUCKET_ENDPOINT",
        "BUCKET_NAME",
        "BUCKET_REGION",
      ]);

      const ref = (key: string) => ({ secretKeyRef: { name: "shared-bucket-keys", key } });
      const pod = await admin.create<PodObject>(PODS, {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "uploader", namespace: team },
        spec: {
          containers: [
            {
              name: "main",
              image: "registry.example.com/uploader:1",
              env: [
                { name: "AWS_ACCESS_KEY_ID", valueFrom: ref("AWS_ACCESS_KEY_ID") },
                { name: "AWS_SECRET_ACCESS_KEY", valueFrom: ref("AWS_SECRET_ACCESS_KEY") },
              ],
            },
          ],
        },
      });
      // No kubelet: the env is resolved here as the kubelet would, from the Secret.
      const env: Record<string, string | undefined> = {};
      for (const e of pod.spec.containers[0]?.env ?? []) {
        const r = e.valueFrom?.secretKeyRef;
        if (r) env[e.name] = unb64((await secret(r.name))?.data?.[r.key]);
      }
      expect(env).toEqual({
        AWS_ACCESS_KEY_ID: s3.server.accessKeyId,
        AWS_SECRET_ACCESS_KEY: s3.server.secretAccessKey,
      });
    }, 90_000);

    it("writes the rotated key pair into the Secret once the connection's Secret holds it, without a restart", async () => {
      const accessKeyId = `export-rotated-${Date.now()}`;
      const secretAccessKey = `export-rotated-secret-${Math.random().toString(36).slice(2)}`;
      redactor.add(accessKeyId);
      redactor.add(secretAccessKey);
      await s3.server.restartWithKeys(accessKeyId, secretAccessKey);
      await admin.patch(
        SECRETS,
        { namespace: ops, name: "s3-keys" },
        { data: { accessKeyId: b64(accessKeyId), secretAccessKey: b64(secretAccessKey) } },
      );
      await eventually(async () => {
        const data = (await secret("shared-bucket-keys"))?.data ?? {};
        return unb64(data.AWS_ACCESS_KEY_ID) === accessKeyId &&
          unb64(data.AWS_SECRET_ACCESS_KEY) === secretAccessKey
          ? true
          : undefined;
      }, 30_000);
    }, 60_000);

    it("writes nothing and says why in Synced and a Warning event when the connection does not allow it", async () => {
      await buckets.create("private", {
        name: `private-${suffix}`,
        connectionRef: { name: refusing },
        exportTo: { secretName: "private-bucket-keys" },
      });
      const why = `Secret private-bucket-keys (spec.exportTo.secretName) not written: ServiceConnection ${refusing} does not allow exporting credentials (set its spec.objectStorage.exportCredentials to true)`;
      const refused = await buckets.waitFor(
        "private",
        (o) => syncedOf(o)?.reason === "CredentialsExportNotAllowed",
        30_000,
      );
      expect(syncedOf(refused)).toMatchObject({ status: "False", message: why });
      // The bucket itself is there and kept as the spec says.
      await buckets.waitForCondition("private", "Ready", "True", "Available", 30_000);
      const [warning] = await eventually(async () => {
        const found = await warningsOf(team, "private");
        return found.length ? found : undefined;
      }, 30_000);
      expect(warning?.type).toBe("Warning");
      expect(warning?.note).toBe(why);
      // A later reconcile (a spec change) still writes nothing.
      await buckets.patchSpec("private", { tags: { v: "2" } });
      await buckets.waitFor(
        "private",
        (o) =>
          o.metadata?.generation ===
            (o.status as { observedGeneration?: number } | undefined)?.observedGeneration &&
          syncedOf(o)?.reason === "CredentialsExportNotAllowed",
      );
      expect(await secret("private-bucket-keys")).toBeUndefined();
    }, 90_000);

    it("on a renamed secretName, deletes the Secret it wrote under the old name, never one it did not write", async () => {
      await admin.create(SECRETS, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "someone-elses-keys", namespace: team },
        data: { MINE: b64("not the operator's") },
      });
      const uid = (await buckets.get("shared"))?.metadata?.uid;
      // To a name someone else's Secret holds: the old one goes, the other is not touched.
      await buckets.patchSpec("shared", { exportTo: { secretName: "someone-elses-keys" } });
      await eventually(
        async () => ((await secret("shared-bucket-keys")) ? undefined : true),
        30_000,
      );
      // And on to a free name: written there, the other Secret still as it was.
      await buckets.patchSpec("shared", { exportTo: { secretName: "shared-bucket-keys-2" } });
      const renamed = await eventually(() => secret("shared-bucket-keys-2"), 30_000);
      expect(Object.keys(renamed.data ?? {}).sort()).toEqual([
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
      ]);
      expect(renamed.metadata?.ownerReferences?.[0]).toMatchObject({ uid, controller: true });
      expect((await secret("someone-elses-keys"))?.data).toEqual({
        MINE: b64("not the operator's"),
      });
      expect(await secret("shared-bucket-keys")).toBeUndefined();
    }, 60_000);

    it("writes again within 20 polls a Secret deleted by hand", async () => {
      await admin.delete(SECRETS, { namespace: team, name: "shared-bucket-keys-2" });
      const back = await eventually(() => secret("shared-bucket-keys-2"), 30_000);
      expect(unb64(back.data?.AWS_ACCESS_KEY_ID)).toBe(s3.server.accessKeyId);
    }, 60_000);

    it("deletes the Secret of the old name after a restart too (the name is in the status)", async () => {
      await buckets.waitFor(
        "shared",
        (o) =>
          (o.status as { exportedSecretName?: string } | undefined)?.exportedSecretName ===
          "shared-bucket-keys-2",
      );
      // The operator stops (its emulator stays), the name changes, another one starts.
      await op.manager.stop();
      await buckets.patchSpec("shared", { exportTo: { secretName: "shared-bucket-keys-3" } });
      restarted = await start(op.emulator);
      await eventually(() => secret("shared-bucket-keys-3"), 30_000);
      await eventually(
        async () => ((await secret("shared-bucket-keys-2")) ? undefined : true),
        30_000,
      );
      expect((await secret("someone-elses-keys"))?.data).toEqual({
        MINE: b64("not the operator's"),
      });
    }, 90_000);

    it("deletes the Secret it wrote once the connection stops allowing the export", async () => {
      expect(await secret("shared-bucket-keys-3")).toBeDefined();
      await admin.patch(
        serviceConnectionCrd,
        { namespace: "", name: allowing },
        { spec: { objectStorage: { exportCredentials: false } } },
      );
      // A spec change reconciles the Bucket whether or not the connection change does.
      await buckets.patchSpec("shared", { tags: { v: "2" } });
      await eventually(
        async () => ((await secret("shared-bucket-keys-3")) ? undefined : true),
        30_000,
      );
      const notes = (await warningsOf(team, "shared")).map((e) => e.note);
      expect(notes).toContain(
        `Secret shared-bucket-keys-3 deleted: ServiceConnection ${allowing} does not allow exporting credentials (set its spec.objectStorage.exportCredentials to true)`,
      );
      const synced = syncedOf(
        await buckets.waitFor(
          "shared",
          (o) => syncedOf(o)?.reason === "CredentialsExportNotAllowed",
          30_000,
        ),
      );
      expect(synced?.status).toBe("False");
      // The ConfigMap part is not affected.
      const cm = await admin.get<DataObject>(CONFIG_MAPS, {
        namespace: team,
        name: "shared-bucket",
      });
      expect(cm?.data?.BUCKET_NAME).toBe(`shared-${suffix}`);
    }, 60_000);

    it("puts neither key into an Event or a status", async () => {
      await expectNoKeyIn(team);
    });
  });

  describe("with the operator's objectStorage.exportCredentials off (the default)", () => {
    let op: TestOperator;
    let buckets: ObjectsOf;

    beforeAll(async () => {
      op = await startTestOperator({
        controllers: [bucketController, serviceConnectionController],
        namespaces: [offTeam],
        config: { connections: { secretNamespace: ops } },
        log,
        redactor,
      });
      // The connection allows it: the operator's setting alone refuses.
      await admin.patch(
        serviceConnectionCrd,
        { namespace: "", name: allowing },
        {
          spec: {
            baseUrl: op.emulator.url,
            objectStorage: { exportCredentials: true },
            allowedNamespaces: { names: [offTeam] },
          },
        },
      );
      buckets = new ObjectsOf(admin, bucketCrd, offTeam);
    }, 120_000);

    afterAll(async () => {
      for (const b of ["plain", "watched"]) await buckets?.delete(b).catch(() => undefined);
      await op?.stop();
    });

    it("says CredentialsExportNotAllowed, not DriftDetected, for an Observe-only Bucket", async () => {
      const name = `watched-${suffix}`;
      expect(await s3.client().createBucket(name)).toBe("Created");
      await buckets.create(
        "watched",
        {
          name,
          connectionRef: { name: allowing },
          managementPolicies: ["Observe"],
          exportTo: { secretName: "watched-bucket-keys" },
        },
        { [ANNOTATIONS.externalId]: name },
      );
      const refused = await buckets.waitFor("watched", (o) => syncedOf(o) !== undefined, 30_000);
      const why =
        "Secret watched-bucket-keys (spec.exportTo.secretName) not written: exporting credentials is disabled in the operator (set config objectStorage.exportCredentials, chart value objectStorage.exportCredentials, to true)";
      // The bucket made outside has no owner tag: that drift is named after the refusal.
      expect(syncedOf(refused)).toMatchObject({
        status: "False",
        reason: "CredentialsExportNotAllowed",
        message: `${why}; also, the remote resource differs from the spec in tags; spec.managementPolicies [Observe] has no Update, so it is not changed`,
      });
      expect(await secretIn(offTeam, "watched-bucket-keys")).toBeUndefined();
    }, 60_000);

    it("writes the ConfigMap but no Secret, and Synced and a Warning event name the setting to turn on", async () => {
      await buckets.create("plain", {
        name: `plain-${suffix}`,
        connectionRef: { name: allowing },
        exportTo: { configMapName: "plain-bucket", secretName: "plain-bucket-keys" },
      });
      const refused = await buckets.waitFor(
        "plain",
        (o) => syncedOf(o)?.reason === "CredentialsExportNotAllowed",
        30_000,
      );
      const why =
        "Secret plain-bucket-keys (spec.exportTo.secretName) not written: exporting credentials is disabled in the operator (set config objectStorage.exportCredentials, chart value objectStorage.exportCredentials, to true)";
      expect(syncedOf(refused)).toMatchObject({ status: "False", message: why });
      await buckets.waitForCondition("plain", "Ready", "True", "Available", 30_000);
      const [warning] = await eventually(async () => {
        const found = await warningsOf(offTeam, "plain");
        return found.length ? found : undefined;
      }, 30_000);
      expect(warning?.type).toBe("Warning");
      expect(warning?.note).toBe(why);
      const cm = await eventually(async () => {
        const c = await admin.get<DataObject>(CONFIG_MAPS, {
          namespace: offTeam,
          name: "plain-bucket",
        });
        return c?.data?.BUCKET_NAME ? c : undefined;
      }, 30_000);
      expect(cm.data?.BUCKET_NAME).toBe(`plain-${suffix}`);
      expect(await secretIn(offTeam, "plain-bucket-keys")).toBeUndefined();
      await expectNoKeyIn(offTeam);
    }, 90_000);
  });

  it("writes the key pair into no log line", () => {
    expect(lines.length).toBeGreaterThan(10);
    const text = lines.join("\n");
    for (const key of [s3.server.accessKeyId, s3.server.secretAccessKey]) {
      expect(text).not.toContain(key);
      expect(text).not.toContain(b64(key));
    }
  });
});
