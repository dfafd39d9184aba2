import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { allCrds, GROUP, type TrainingJobStatus, VERSION } from "../../src/crds/index.js";
import { installCrds, refusal } from "../support/crds.js";
import { kubeRequest } from "../support/http.js";
import { adminKubeConfig, createNamespace, deleteNamespace, eventually } from "../support/kube.js";

type Obj = { apiVersion: string; kind: string; metadata: { name: string }; spec: object };

const samplesDir = resolve(import.meta.dirname, "../../deploy/samples");
const samples: Obj[] = readdirSync(samplesDir)
  .filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml")
  .flatMap((f) =>
    parseAllDocuments(readFileSync(join(samplesDir, f), "utf8")).map((d) => d.toJS() as Obj),
  );

const pluralOf = (kind: string): string => {
  const def = allCrds.find((d) => d.kind === kind);
  if (!def) throw new Error(`unknown kind ${kind}`);
  return def.plural;
};

describe("the CRDs on a real API server", () => {
  const kc = adminKubeConfig();
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const merge = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch);
  let namespace = "";

  const create = (kind: string, name: string, spec: object) =>
    custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: pluralOf(kind),
      body: { apiVersion: `${GROUP}/${VERSION}`, kind, metadata: { name }, spec },
    }) as Promise<Obj>;
  const patchSpec = (kind: string, name: string, spec: object) =>
    custom.patchNamespacedCustomObject(
      { group: GROUP, version: VERSION, namespace, plural: pluralOf(kind), name, body: { spec } },
      merge,
    ) as Promise<Obj>;
  /** The refusal of a spec patch; fails the test when the patch is accepted. */
  const refusedPatch = async (kind: string, name: string, spec: object) => {
    const err = await patchSpec(kind, name, spec).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err, `patch ${JSON.stringify(spec)} was accepted`).toBeDefined();
    return refusal(err);
  };

  beforeAll(async () => {
    await installCrds(kc);
    // Idempotent: a second install (as another test file would do) must not fail.
    await installCrds(kc);
    namespace = await createNamespace(kc, "crds");
  });

  // The samples are left to no operator: gone before the next file, whose operator may
  // watch all namespaces (test/e2e/operator-as-chart-serviceaccount.test.ts).
  afterAll(async () => {
    for (const sample of samples.filter((s) => s.kind === "ServiceConnection")) {
      const path = `/apis/${GROUP}/${VERSION}/${pluralOf(sample.kind)}/${sample.metadata.name}`;
      await kubeRequest(kc, "DELETE", path);
    }
    if (namespace) await deleteNamespace(kc, namespace);
  });

  it("accepts every sample, applied server-side, and fills in the schema defaults", async () => {
    expect(samples.length).toBeGreaterThanOrEqual(4);
    for (const sample of samples) {
      // The cluster-scoped ServiceConnection has no namespace in its path.
      const scope = sample.kind === "ServiceConnection" ? "" : `/namespaces/${namespace}`;
      const path = `/apis/${GROUP}/${VERSION}${scope}/${pluralOf(sample.kind)}/${sample.metadata.name}?fieldManager=samples`;
      const res = await kubeRequest(kc, "PATCH", path, {
        body: sample,
        contentType: "application/apply-patch+yaml",
      });
      expect(res.status, `${sample.kind}/${sample.metadata.name}: ${res.body}`).toBe(201);
    }
    const template = (await custom.getNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: "trainingtemplates",
      name: "pytorch-ddp",
    })) as { spec: { storage: { readOnly: boolean }[]; deletionPolicy: string } };
    expect(template.spec.storage[0]?.readOnly).toBe(true);
    expect(template.spec.deletionPolicy).toBe("Orphan");
  });

  it("defaults createType, exposePorts, deletionPolicy and readOnly of a TrainingJob, but not its priority", async () => {
    const created = (await create("TrainingJob", "defaults", {
      image: "i:1",
      productCode: "gpu-1x",
      workerCount: 1,
      storage: [{ storageId: "s-1" }],
      ports: [{ port: 8080 }],
    })) as Obj & { spec: Record<string, unknown> };
    // An omitted priority stays omitted: a TEMPLATE or COPY job inherits it, a DIRECT
    // one is sent with 3 by the operator.
    expect(created.spec).not.toHaveProperty("priority");
    expect(created.spec).toMatchObject({
      createType: "DIRECT",
      exposePorts: false,
      deletionPolicy: "Orphan",
      storage: [{ storageId: "s-1", readOnly: true }],
      ports: [{ port: 8080, protocol: "http" }],
    });
  });

  it("refuses a change of a TrainingJob's image but accepts a change of its description", async () => {
    await create("TrainingJob", "immutable", {
      description: "first",
      image: "registry.example.com/train:1",
      productCode: "gpu-1x",
      workerCount: 2,
      env: { A: "1" },
    });
    const image = await refusedPatch("TrainingJob", "immutable", {
      image: "registry.example.com/train:2",
    });
    expect(image.code).toBe(422);
    expect(image.message).toContain("spec.image: Invalid value");
    expect(image.message).toContain(
      "image is immutable (a limit of the service): the service cannot change a submitted training task",
    );

    const updated = (await patchSpec("TrainingJob", "immutable", { description: "second" })) as {
      spec: { description: string; image: string };
    };
    expect(updated.spec).toMatchObject({
      description: "second",
      image: "registry.example.com/train:1",
    });
  });

  it("accepts changes of ports, exposePorts and deletionPolicy but refuses adding or removing an immutable field", async () => {
    await create("TrainingJob", "ports", {
      image: "i:1",
      productCode: "gpu-1x",
      workerCount: 1,
      env: { A: "1" },
    });
    await patchSpec("TrainingJob", "ports", { ports: [{ port: 6006 }] });
    await patchSpec("TrainingJob", "ports", {
      ports: [{ port: 6006 }, { port: 8888, protocol: "https" }],
    });
    // The operator's own fields: what it does on deletion, the Services it makes.
    const own = (await patchSpec("TrainingJob", "ports", {
      deletionPolicy: "Delete",
      exposePorts: true,
    })) as { spec: { deletionPolicy: string; exposePorts: boolean } };
    expect(own.spec).toMatchObject({ deletionPolicy: "Delete", exposePorts: true });
    const added = await refusedPatch("TrainingJob", "ports", { startCommand: "python x.py" });
    expect(added.message).toContain("spec.startCommand: Invalid value");
    expect(added.message).toContain("startCommand is immutable");
    const removed = await refusedPatch("TrainingJob", "ports", { env: null });
    expect(removed.message).toContain("env is immutable");
    const priority = await refusedPatch("TrainingJob", "ports", { priority: 1 });
    expect(priority.message).toContain("priority is immutable");
  });

  it("lets a NasVolume scale and move its mount path, set storageId once, and nothing else", async () => {
    await create("NasVolume", "nas", { productCode: "nas-std", capacityGB: 10 });
    await patchSpec("NasVolume", "nas", { capacityGB: 20, mountPath: "/mnt/new" });
    await patchSpec("NasVolume", "nas", { storageId: "nas-123" });
    const changed = await refusedPatch("NasVolume", "nas", { storageId: "nas-456" });
    expect(changed.message).toContain("spec.storageId");
    expect(changed.message).toContain("storageId is immutable once set (a rule of the operator)");
    const unset = await refusedPatch("NasVolume", "nas", { storageId: null });
    expect(unset.message).toContain("storageId is immutable once set");
    const product = await refusedPatch("NasVolume", "nas", { productCode: "nas-fast" });
    expect(product.message).toContain("productCode is immutable (a limit of the service)");
    const name = await refusedPatch("NasVolume", "nas", { name: "other-dir" });
    expect(name.message).toContain("spec.name: Invalid value");
    expect(name.message).toContain("name is immutable");
  });

  it("refuses a ServiceConnection with a plain http baseUrl unless allowed, a URL carrying a user or password, or both or neither S3 credential sources, and a change of an object's connectionRef", async () => {
    const conn = (name: string, spec: object) =>
      custom.createClusterCustomObject({
        group: GROUP,
        version: VERSION,
        plural: "serviceconnections",
        body: {
          apiVersion: `${GROUP}/${VERSION}`,
          kind: "ServiceConnection",
          metadata: { name },
          spec,
        },
      });
    const key = { namespace: "aidc-system", name: "k" };
    const name = `crds-${namespace}`;
    const http = await conn(`${name}-http`, {
      baseUrl: "http://svc.local",
      apiKeySecretRef: key,
    }).then(
      () => undefined,
      (e: unknown) => refusal(e),
    );
    expect(http?.message).toContain("spec.baseUrl: Invalid value");
    expect(http?.message).toContain("set allowInsecureHttp: true for a local emulator only");
    // Credentials in a URL would show in kubectl get and every message naming it.
    const withUser = await conn(`${name}-user`, {
      baseUrl: "https://user:secret@svc.local",
      apiKeySecretRef: key,
      objectStorage: {
        endpoint: "https://AKID:s3secret@s3.local",
        credentialsSecretRef: { namespace: "aidc-system", name: "s3" },
      },
    }).then(
      () => undefined,
      (e: unknown) => refusal(e),
    );
    expect(withUser?.message).toContain("spec.baseUrl: Invalid value");
    expect(withUser?.message).toContain("spec.objectStorage.endpoint: Invalid value");
    expect(withUser?.message).toContain("must not carry a user or password (user:password@host)");
    // A connection's S3 credentials come from a Secret or a web identity: exactly one.
    const storage = (extra: Record<string, unknown>) =>
      conn(`${name}-storage`, {
        baseUrl: "https://svc.local",
        apiKeySecretRef: key,
        objectStorage: { endpoint: "https://s3.local", ...extra },
      }).then(
        () => undefined,
        (e: unknown) => refusal(e),
      );
    const role = { roleArn: "arn:aws:iam::000000000000:role/team-a" };
    for (const extra of [
      {},
      { webIdentity: role, credentialsSecretRef: { namespace: "aidc-system", name: "s3" } },
    ]) {
      const refused = await storage(extra);
      expect(refused?.code).toBe(422);
      expect(refused?.message).toContain("spec.objectStorage: Invalid value");
      expect(refused?.message).toContain(
        "set exactly one of credentialsSecretRef (a Secret's key pair) and webIdentity",
      );
    }
    const created = (await conn(name, {
      baseUrl: "http://svc.local",
      allowInsecureHttp: true,
      apiKeySecretRef: key,
    })) as { spec: { apiKeySecretRef: { key: string } } };
    expect(created.spec.apiKeySecretRef.key).toBe("apiKey");
    await custom.deleteClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural: "serviceconnections",
      name,
    });

    await create("NasVolume", "connected", { productCode: "p", connectionRef: { name: "team-a" } });
    const moved = await refusedPatch("NasVolume", "connected", {
      connectionRef: { name: "team-b" },
    });
    expect(moved.message).toContain("connectionRef is immutable (a rule of the operator)");
  });

  it("lets a FileSystem change its mounts and set fileSystemId once, never its size or protocol", async () => {
    await create("FileSystem", "fs", { sizeGB: 10, protocol: "NFS" });
    await patchSpec("FileSystem", "fs", {
      mounts: [{ name: "a", target: { instanceId: "cci-1" }, mountPath: "/mnt/a" }],
    });
    await patchSpec("FileSystem", "fs", { mounts: [], fileSystemId: "fs-1" });
    const size = await refusedPatch("FileSystem", "fs", { sizeGB: 20 });
    expect(size.message).toContain("spec.sizeGB");
    expect(size.message).toContain("sizeGB is immutable (a limit of the service)");
    const protocol = await refusedPatch("FileSystem", "fs", { protocol: "SMB" });
    expect(protocol.message).toContain("protocol is immutable");
    const rebind = await refusedPatch("FileSystem", "fs", { fileSystemId: "fs-2" });
    expect(rebind.message).toContain("fileSystemId is immutable once set");
  });

  it("keeps a CciInstance bound and a TrainingTemplate's source fixed, while a template's fields change", async () => {
    await create("CciInstance", "cci", { instanceId: "cci-1" });
    await patchSpec("CciInstance", "cci", { images: [{ imageName: "a/b", tag: "v1" }] });
    const rebind = await refusedPatch("CciInstance", "cci", { instanceId: "cci-2" });
    expect(rebind.message).toContain("instanceId is immutable");

    await create("TrainingTemplate", "tpl", { image: "i:1", productCode: "gpu-1x" });
    await patchSpec("TrainingTemplate", "tpl", { image: "i:2", workerCount: 4, priority: 1 });
    await create("TrainingTemplate", "saved", { fromTrainingJobRef: { name: "immutable" } });
    const source = await refusedPatch("TrainingTemplate", "saved", {
      fromTrainingJobRef: { name: "x" },
    });
    expect(source.message).toContain("fromTrainingJobRef is immutable");
  });

  it("publishes the field descriptions in the OpenAPI v3 document", async () => {
    const doc = await eventually(async () => {
      const res = await kubeRequest(kc, "GET", `/openapi/v3/apis/${GROUP}/${VERSION}`);
      if (res.status !== 200) return undefined;
      const json = JSON.parse(res.body) as {
        components: { schemas: Record<string, { properties?: Record<string, SchemaLike> }> };
      };
      return json.components.schemas["io.aidc.v1alpha1.TrainingJob"] ? json : undefined;
    });
    const spec = doc.components.schemas["io.aidc.v1alpha1.TrainingJob"]?.properties?.spec;
    expect(spec?.properties?.priority?.description).toContain("Scheduling priority 1 to 3");
    expect(spec?.properties?.image?.description).toBe("Container image address of every worker.");
    const nas = doc.components.schemas["io.aidc.v1alpha1.NasVolume"]?.properties?.spec;
    expect(nas?.properties?.mountPath?.description).toContain("2 to 64 letters");
    const cci = doc.components.schemas["io.aidc.v1alpha1.CciInstance"]?.properties?.status;
    expect(cci?.properties?.remoteSubStatus?.description).toContain("sub-status");
  });

  it("shows the printer columns, filled from status, in the server's Table output", async () => {
    await create("TrainingJob", "table", { image: "i:1", productCode: "gpu-1x", workerCount: 1 });
    const status: TrainingJobStatus = fullStatus();
    const written = (await custom.patchNamespacedCustomObjectStatus(
      {
        group: GROUP,
        version: VERSION,
        namespace,
        plural: "trainingjobs",
        name: "table",
        body: { status },
      },
      merge,
    )) as { status: TrainingJobStatus };
    // Nothing the operator writes is pruned: the status schema knows every field.
    expect(written.status).toEqual(status);

    const res = await kubeRequest(
      kc,
      "GET",
      `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/trainingjobs/table`,
      {
        accept: "application/json;as=Table;v=v1;g=meta.k8s.io",
      },
    );
    expect(res.status).toBe(200);
    const table = JSON.parse(res.body) as {
      kind: string;
      columnDefinitions: { name: string; priority: number }[];
      rows: { cells: unknown[] }[];
    };
    expect(table.kind).toBe("Table");
    const names = table.columnDefinitions.map((c) => c.name);
    expect(names.slice(0, 7)).toEqual([
      "Name",
      "Status",
      "Task-ID",
      "Ready",
      "Synced",
      "Reason",
      "Age",
    ]);
    // Nothing False: no REASON.
    expect(table.rows[0]?.cells.slice(0, 6)).toEqual([
      "table",
      "Running",
      "task-42",
      "True",
      "True",
      null,
    ]);

    // READY, SYNCED and REASON of the row once the conditions are `conditions`.
    const [readyCond, syncedCond] = status.conditions ?? [];
    const columnsWith = async (conditions: unknown[]) => {
      await custom.patchNamespacedCustomObjectStatus(
        {
          group: GROUP,
          version: VERSION,
          namespace,
          plural: "trainingjobs",
          name: "table",
          body: { status: { conditions } },
        },
        merge,
      );
      const res = await kubeRequest(
        kc,
        "GET",
        `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/trainingjobs/table`,
        { accept: "application/json;as=Table;v=v1;g=meta.k8s.io" },
      );
      return (JSON.parse(res.body) as { rows: { cells: unknown[] }[] }).rows[0]?.cells.slice(3, 6);
    };
    // A revoked API key: READY still True, but SYNCED and REASON say what is wrong.
    expect(
      await columnsWith([
        readyCond,
        { ...syncedCond, status: "False", reason: "ApiKeyRefused", message: "403" },
      ]),
    ).toEqual(["True", "False", "ApiKeyRefused"]);
    // A task status word the operator cannot read: READY Unknown, and REASON says why.
    expect(
      await columnsWith([
        { ...readyCond, status: "Unknown", reason: "UnknownTaskStatus", message: "PAUSED" },
        syncedCond,
      ]),
    ).toEqual(["Unknown", "True", "UnknownTaskStatus"]);

    for (const def of allCrds) {
      // A kind installed moments ago answers 429 while its watch cache initializes.
      const list = await eventually(async () => {
        const res = await kubeRequest(
          kc,
          "GET",
          `/apis/${GROUP}/${VERSION}${def.namespaced ? `/namespaces/${namespace}` : ""}/${def.plural}`,
          { accept: "application/json;as=Table;v=v1;g=meta.k8s.io" },
        );
        return res.status === 429 ? undefined : res;
      });
      expect(list.status).toBe(200);
      const cols = (JSON.parse(list.body) as { columnDefinitions: { name: string }[] })
        .columnDefinitions;
      expect(cols.map((c) => c.name)).toEqual(["Name", ...def.printerColumns.map((c) => c.name)]);
    }
  });
});

type SchemaLike = { description?: string; properties?: Record<string, SchemaLike> };

/** A status with every kind of field a TrainingJob controller writes. */
function fullStatus(): TrainingJobStatus {
  const t = "2026-01-02T03:04:05Z";
  return {
    observedGeneration: 1,
    conditions: [
      {
        type: "Ready",
        status: "True",
        reason: "Available",
        message: "",
        lastTransitionTime: t,
        observedGeneration: 1,
      },
      {
        type: "Synced",
        status: "True",
        reason: "ReconcileSuccess",
        message: "",
        lastTransitionTime: t,
      },
    ],
    phase: "Running",
    taskId: "task-42",
    subscriptionKey: "sub-1",
    subscription: { outcome: "Succeeded", message: "ok", submittedTime: t },
    remoteStatus: "RUNNING",
    aidcId: 1,
    createdTime: t,
    startTime: t,
    lastUpdateTime: t,
    resource: {
      type: "worker",
      productCode: "gpu-1x",
      cpuCores: "8",
      memoryGB: "64",
      gpuName: "A100",
      gpuCount: "1",
      workerCount: 1,
      productPrice: "3.5",
      productName: "A100 x1",
    },
    execInfos: [{ status: "RUNNING", info: "started", createTime: t }],
    storages: [
      {
        storageId: "s-1",
        name: "data",
        storageType: "NAS",
        status: "Running",
        mountPath: "/data",
        quotaGB: 100,
        usedGB: 1.5,
      },
    ],
    pods: [
      {
        name: "task-42-worker-0",
        containers: [
          {
            name: "main",
            status: "running",
            reason: "",
            restartCount: 0,
            targetPorts: [6006],
            webSSH: "",
          },
        ],
        volumes: [{ name: "data", type: "NAS", mountPath: "/data", readOnly: true, path: "/" }],
        ports: [
          { port: 22, custom: false, externalHost: "10.0.0.1", externalPort: 30022 },
          {
            port: 6006,
            protocol: "http",
            custom: true,
            externalHost: "10.0.0.1",
            externalPort: 30606,
            serviceName: "table-6006",
          },
        ],
      },
    ],
  };
}
