/**
 * A Bucket's spec.exportTo.secretName on the real API server (kube-controller-manager's
 * garbage collector) and a real S3 server (MinIO): with a ServiceConnection that allows
 * exporting credentials, a Secret owned by the Bucket holds the connection's key pair,
 * which a Pod object's secretKeyRef env reads; with one that does not, nothing is
 * written and a Warning event says why. No key reaches a log line, an Event or a status.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bucketController } from "../../src/controllers/bucket/controller.js";
import { serviceConnectionController } from "../../src/controllers/connections/controller.js";
import { SECRETS } from "../../src/controllers/connections/registry.js";
import { CONFIG_MAPS, EXPORTED_LABEL } from "../../src/controllers/managed/export.js";
import { bucketCrd } from "../../src/crds/bucket.js";
import { serviceConnectionCrd } from "../../src/crds/serviceconnection.js";
import { SecretRedactor } from "../../src/runtime/redaction.js";
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

describe("a Bucket's spec.exportTo.secretName", () => {
  let s3: TestS3;
  let op: TestOperator;
  let ops = "";
  let team = "";
  let buckets: ObjectsOf;
  const suffix = `${Date.now().toString(36)}`;
  const allowing = `export-allowed-${suffix}`;
  const refusing = `export-refused-${suffix}`;
  const redactor = new SecretRedactor();
  const { log, lines } = capturedLog(redactor);
  const connection = (name: string, exportCredentials?: boolean) => ({
    apiVersion: "aidc.io/v1alpha1",
    kind: "ServiceConnection",
    metadata: { name },
    spec: {
      baseUrl: op.emulator.url,
      allowInsecureHttp: true,
      apiKeySecretRef: { namespace: ops, name: "api-key", key: "apiKey" },
      objectStorage: {
        endpoint: s3.server.url,
        credentialsSecretRef: { namespace: ops, name: "s3-keys" },
        ...(exportCredentials === undefined ? {} : { exportCredentials }),
      },
      allowedNamespaces: { names: [team] },
    },
  });

  beforeAll(async () => {
    s3 = await startTestS3();
    const kc = adminKubeConfig();
    [ops, team] = await Promise.all([
      createNamespace(kc, "bkx-ops"),
      createNamespace(kc, "bkx-team"),
    ]);
    op = await startTestOperator({
      controllers: [bucketController, serviceConnectionController],
      namespaces: [team],
      config: { connections: { secretNamespace: ops } },
      log,
      redactor,
    });
    await op.kube.create(SECRETS, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "api-key", namespace: ops },
      data: { apiKey: b64(TEST_API_KEY) },
    });
    await op.kube.create(SECRETS, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "s3-keys", namespace: ops },
      data: {
        accessKeyId: b64(s3.server.accessKeyId),
        secretAccessKey: b64(s3.server.secretAccessKey),
      },
    });
    await op.kube.create(serviceConnectionCrd, connection(allowing, true));
    // exportCredentials omitted: the default, false.
    await op.kube.create(serviceConnectionCrd, connection(refusing));
    buckets = new ObjectsOf(op.kube, bucketCrd, team);
  }, 120_000);

  afterAll(async () => {
    for (const b of ["shared", "private"]) await buckets?.delete(b).catch(() => undefined);
    for (const c of [allowing, refusing]) {
      await op?.kube
        .patch(serviceConnectionCrd, { namespace: "", name: c }, { metadata: { finalizers: null } })
        .catch(() => undefined);
      await op?.kube
        .delete(serviceConnectionCrd, { namespace: "", name: c })
        .catch(() => undefined);
    }
    await op?.stop();
    await s3?.stop();
  });

  const secret = (name: string) => op.kube.get<DataObject>(SECRETS, { namespace: team, name });

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
    // The public part stays in the ConfigMap, the key pair only in the Secret.
    const cm = await eventually(async () => {
      const c = await op.kube.get<DataObject>(CONFIG_MAPS, {
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
    const pod = await op.kube.create<PodObject>(PODS, {
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

  it("writes nothing and says why in a Warning event when the connection does not allow it", async () => {
    await buckets.create("private", {
      name: `private-${suffix}`,
      connectionRef: { name: refusing },
      exportTo: { secretName: "private-bucket-keys" },
    });
    await buckets.waitForCondition("private", "Ready", "True", "Available", 30_000);
    const warning = await eventually(async () => {
      const { items } = await op.kube.list<EventObject>(EVENTS, team);
      return items.find(
        (e) => e.reason === "CredentialsExportNotAllowed" && e.regarding?.name === "private",
      );
    }, 30_000);
    expect(warning.type).toBe("Warning");
    expect(warning.note).toBe(
      `Secret private-bucket-keys not written: ServiceConnection ${refusing} (spec.objectStorage.exportCredentials) does not allow exporting credentials`,
    );
    // A later reconcile (a spec change) still writes nothing.
    await buckets.patchSpec("private", { tags: { v: "2" } });
    await buckets.waitFor(
      "private",
      (o) =>
        o.metadata?.generation ===
        (o.status as { observedGeneration?: number } | undefined)?.observedGeneration,
    );
    expect(await secret("private-bucket-keys")).toBeUndefined();
  }, 90_000);

  it("writes the key pair into no log line, Event or status", async () => {
    const { items: events } = await op.kube.list<KubeObject>(EVENTS, team);
    const { items: objects } = await op.kube.list<KubeObject>(bucketCrd, team);
    expect(lines.length).toBeGreaterThan(10);
    const everything = [...lines, JSON.stringify(events), JSON.stringify(objects)].join("\n");
    for (const key of [s3.server.accessKeyId, s3.server.secretAccessKey]) {
      expect(everything).not.toContain(key);
      expect(everything).not.toContain(b64(key));
    }
  });
});
