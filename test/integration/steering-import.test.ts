/**
 * Observe-only import (`spec.managementPolicies: [Observe]`) of resources made outside
 * the cluster, one per kind the emulator serves (a task, a template, a block volume, a
 * file system; a NAS in steering.test.ts, and a template under a second
 * ServiceConnection), against the real API server and the emulator: status shows the
 * remote state, the request log shows no writing call over several polls, and deleting
 * the object (deletionPolicy Delete) leaves every remote resource. A bucket on the
 * real S3 server (MinIO, no request log): its features stay as made outside.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blockVolumeController } from "../../src/controllers/blockvolume/controller.js";
import { bucketController } from "../../src/controllers/bucket/controller.js";
import { serviceConnectionController } from "../../src/controllers/connections/controller.js";
import { fileSystemController } from "../../src/controllers/filesystem/controller.js";
import { ANNOTATIONS } from "../../src/controllers/managed/decisions.js";
import { trainingJobController } from "../../src/controllers/trainingjob/controller.js";
import { trainingTemplateController } from "../../src/controllers/trainingtemplate/controller.js";
import { blockVolumeCrd } from "../../src/crds/blockvolume.js";
import { bucketCrd } from "../../src/crds/bucket.js";
import { fileSystemCrd } from "../../src/crds/filesystem.js";
import { trainingJobCrd } from "../../src/crds/trainingjob.js";
import { trainingTemplateCrd } from "../../src/crds/trainingtemplate.js";
import type { RequestLogEntry } from "../../src/emulator/request-log.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import type { KubeObject, ResourceDescriptor } from "../../src/runtime/resource.js";
import { ServiceClient } from "../../src/service/client.js";
import { BlockVolumeService } from "../../src/service/kinds/blockvolume.js";
import { FileSystemOperations } from "../../src/service/kinds/filesystem.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import { startTestOperator, TEST_API_KEY, type TestOperator } from "../support/operator.js";
import { startTestS3, type TestS3 } from "../support/s3.js";
import { connectTwoTeams, removeConnections } from "../support/two-teams.js";

const POLL_MS = 500;
const KEY_A = "steer-team-a-key-0001";
const KEY_B = "steer-team-b-key-0001";
const IMAGE = "registry.example.com/ml/train:1";
const OBSERVE = { managementPolicies: ["Observe"], deletionPolicy: "Delete" };

let emulator: RunningEmulator;
let s3: TestS3;
let op: TestOperator;
let ns = "";
let ops = "";
let teamA = "";
let teamB = "";
let connA = "";
let connB = "";
const of = (crd: ResourceDescriptor, namespace = ns) => new ObjectsOf(op.kube, crd, namespace);

beforeAll(async () => {
  const kc = adminKubeConfig();
  [ns, ops, teamA, teamB] = await Promise.all([
    createNamespace(kc, "import"),
    createNamespace(kc, "import-ops"),
    createNamespace(kc, "import-a"),
    createNamespace(kc, "import-b"),
  ]);
  connA = `${teamA}-account`;
  connB = `${teamB}-account`;
  s3 = await startTestS3();
  emulator = await startEmulator({
    apiKey: TEST_API_KEY,
    subscriptionDelayMs: 200,
    fileStorageDelayMs: 200,
    volumeTransitionMs: 200,
    tenants: [
      { name: "a", apiKey: KEY_A },
      { name: "b", apiKey: KEY_B },
    ],
  });
  op = await startTestOperator({
    controllers: [
      trainingJobController,
      trainingTemplateController,
      blockVolumeController,
      fileSystemController,
      bucketController,
      serviceConnectionController,
    ],
    namespaces: [ns, teamA, teamB],
    emulator,
    pollIntervalMs: POLL_MS,
    config: {
      connections: { secretNamespace: ops },
      objectStorage: s3.config,
      // Resources made outside the cluster may be bound here (tenancy.ts).
      adoption: { namespaces: [ns, teamB] },
    },
    service: {
      endpoints: {
        deleteTrainingTask: "DELETE /v1/training/instance/{id}",
        deleteTemplate: "DELETE /v1/training/template/{id}",
      },
    },
  });
  await connectTwoTeams(op.kube, {
    ...{ ops, teamA, teamB, connA, connB },
    ...{ keyA: KEY_A, keyB: KEY_B, baseUrl: emulator.url },
  });
}, 120_000);

afterAll(async () => {
  await removeConnections(op.kube, [connA, connB]).catch(() => undefined);
  await op?.stop();
  await emulator?.stop();
  await s3?.stop();
});

/** Every request that names `id` in its path or body. */
async function callsAbout(id: string): Promise<RequestLogEntry[]> {
  return (await op.admin.requests()).filter(
    (e) => e.path.includes(id) || JSON.stringify(e.body ?? "").includes(id),
  );
}

const writesTo = async (id: string) => (await callsAbout(id)).filter((e) => e.method !== "GET");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Imports `id` as `name` with Observe only, then checks: Ready=True with the status
 * naming the id, reads but no write over several polls, and after deleting the object
 * (deletionPolicy Delete) still no write: the resource stays.
 */
async function importsOnly(
  crd: ResourceDescriptor,
  name: string,
  id: string,
  spec: Record<string, unknown>,
  options: { annotate?: boolean; namespace?: string; readsById?: boolean } = {},
): Promise<KubeObject> {
  const objects = of(crd, options.namespace);
  await objects.create(
    name,
    { ...spec, ...OBSERVE },
    options.annotate ? { [ANNOTATIONS.externalId]: id } : undefined,
  );
  const ready = await objects.waitForCondition(name, "Ready", "True", undefined, 30_000);
  expect(JSON.stringify(ready.status)).toContain(id);
  await sleep(POLL_MS * 4);
  // A kind read in detail names the id in its reads; a template is read from its list.
  if (options.readsById !== false) expect((await callsAbout(id)).length).toBeGreaterThan(0);
  expect(await writesTo(id)).toEqual([]);
  await objects.delete(name);
  await objects.waitForGone(name, 30_000);
  expect(await writesTo(id)).toEqual([]);
  // The Event is written in the background: it may land after the object is gone.
  await objects.waitForEvents(name, ["Orphaned"]);
  return ready;
}

describe("observe-only import", () => {
  it("of a task, bound by aidc.io/external-id", async () => {
    const { tasks } = await op.admin.seed({ tasks: [{ name: "outside-task", image: IMAGE }] });
    const id = tasks[0] as string;
    const o = await importsOnly(
      trainingJobCrd,
      "task",
      id,
      { image: IMAGE, productCode: "train.cpu.16", workerCount: 1 },
      { annotate: true },
    );
    expect(conditionOf(o, "Ready")?.status).toBe("True");
    // The spec says what the task is: nothing contradicts it.
    expect(conditionOf(o, "Synced")).toMatchObject({ status: "True" });
    expect((await op.service.getTrainingTask(id)).id).toBe(id);
  });

  it("of a task whose product, workers and image the spec misstates: FixedFieldsDiffer, nothing sent", async () => {
    const { tasks } = await op.admin.seed({
      tasks: [{ name: "outside-task-2", image: IMAGE, trainingFramework: "pytorch" }],
    });
    const id = tasks[0] as string;
    const jobs = of(trainingJobCrd);
    await jobs.create(
      "misstated-task",
      {
        image: "registry.example.com/ml/train:2",
        productCode: "train.gpu.a100.8",
        workerCount: 2,
        // The same word in another case (the task's pytorch) is no contradiction.
        trainingFramework: "PyTorch",
        ...OBSERVE,
      },
      { [ANNOTATIONS.externalId]: id },
    );
    const o = await jobs.waitForCondition("misstated-task", "Synced", "False", "FixedFieldsDiffer");
    expect(conditionOf(o, "Synced")?.message).toBe(
      `the spec says productCode "train.gpu.a100.8" (the resource has "train.cpu.16"), workerCount 2 (the resource has 1), image "registry.example.com/ml/train:2" (the resource has "${IMAGE}"), which the service cannot change: delete this object (deletionPolicy Orphan keeps the resource) and create one with the resource's values`,
    );
    const up = await jobs.waitForCondition("misstated-task", "Ready", "True", undefined, 30_000);
    expect(conditionOf(up, "Synced")?.reason).toBe("FixedFieldsDiffer");
    expect(await writesTo(id)).toEqual([]);
    await jobs.delete("misstated-task");
    await jobs.waitForGone("misstated-task", 30_000);
    expect(await writesTo(id)).toEqual([]);
  });

  it("of a template, bound by aidc.io/external-id", async () => {
    const { templates } = await op.admin.seed({
      templates: [{ name: "outside-template", image: IMAGE }],
    });
    const id = templates[0] as string;
    await importsOnly(
      trainingTemplateCrd,
      "template",
      id,
      { image: IMAGE, productCode: "train.cpu.16" },
      { annotate: true, readsById: false },
    );
  });

  it("of a block volume, bound by spec.volumeId", async () => {
    const id = await new BlockVolumeService(op.service).createVolume({
      name: "outside-volume",
      sizeGB: 5,
      volumeType: "ssd",
    });
    const o = await importsOnly(blockVolumeCrd, "volume", id, {
      volumeId: id,
      sizeGB: 5,
      volumeType: "ssd",
    });
    expect(o.status).toMatchObject({ volumeId: id });
  });

  it("of a block volume whose size and type the spec misstates: FixedFieldsDiffer, nothing sent", async () => {
    const id = await new BlockVolumeService(op.service).createVolume({
      name: "outside-volume-2",
      sizeGB: 5,
      volumeType: "ssd",
    });
    const volumes = of(blockVolumeCrd);
    await volumes.create("misstated", { volumeId: id, sizeGB: 50, volumeType: "hdd", ...OBSERVE });
    const o = await volumes.waitForCondition("misstated", "Synced", "False", "FixedFieldsDiffer");
    expect(conditionOf(o, "Synced")?.message).toContain(
      'the spec says sizeGB 50 (the resource has 5), volumeType "hdd" (the resource has "ssd")',
    );
    // The volume itself comes up as it would: Ready follows it, Synced keeps saying why.
    const up = await volumes.waitForCondition("misstated", "Ready", "True", undefined, 30_000);
    expect(conditionOf(up, "Synced")?.reason).toBe("FixedFieldsDiffer");
    expect(await writesTo(id)).toEqual([]);
    await volumes.delete("misstated");
    await volumes.waitForGone("misstated", 30_000);
    expect(await writesTo(id)).toEqual([]);
  });

  it("of a file system, bound by spec.fileSystemId", async () => {
    const created = await new FileSystemOperations(op.service).create({
      name: "outside-fs",
      sizeGB: 10,
    });
    const id = String(created.id);
    await importsOnly(fileSystemCrd, "fs", id, { fileSystemId: id, sizeGB: 10 });
  });

  it("of a file system whose size the spec misstates: FixedFieldsDiffer names that field only", async () => {
    const created = await new FileSystemOperations(op.service).create({
      name: "outside-fs-2",
      sizeGB: 10,
      protocol: "NFS",
    });
    const id = String(created.id);
    const fss = of(fileSystemCrd);
    await fss.create("misstated-fs", { fileSystemId: id, sizeGB: 20, protocol: "NFS", ...OBSERVE });
    const o = await fss.waitForCondition("misstated-fs", "Synced", "False", "FixedFieldsDiffer");
    const message = conditionOf(o, "Synced")?.message ?? "";
    expect(message).toContain("the spec says sizeGB 20 (the resource has 10), which");
    expect(message).not.toContain("protocol");
    expect(await writesTo(id)).toEqual([]);
    await fss.delete("misstated-fs");
    await fss.waitForGone("misstated-fs", 30_000);
  });

  it("of a template in team b's account, under its ServiceConnection", async () => {
    const clientB = new ServiceClient({
      baseUrl: emulator.url,
      apiKey: () => KEY_B,
      rateLimit: null,
    });
    await clientB.createTemplate({ name: "team-b-template", image: IMAGE });
    clientB.close();
    const state = await op.admin.state("b");
    const id = String(
      (state.templates as { id: string; name: string }[]).find((t) => t.name === "team-b-template")
        ?.id,
    );
    await importsOnly(
      trainingTemplateCrd,
      "team-b",
      id,
      { image: IMAGE, productCode: "train.cpu.16" },
      { annotate: true, namespace: teamB, readsById: false },
    );
    // It was read through team b's account (the template list), never written.
    const listed = await op.admin.requests({ endpoint: "listTemplates" });
    expect(listed.some((e) => e.tenant === "b")).toBe(true);
  });

  it("of a bucket, bound by aidc.io/external-id: its features stay as made outside", async () => {
    const name = `outside-${ns.split("-").pop()}`;
    const client = s3.client();
    expect(await client.createBucket(name)).toBe("Created");
    await buckets().create(
      "bucket",
      { name, versioning: "Enabled", tags: { team: "x" }, ...OBSERVE },
      { [ANNOTATIONS.externalId]: name },
    );
    const o = await buckets().waitForCondition(
      "bucket",
      "Synced",
      "False",
      "DriftDetected",
      30_000,
    );
    expect(conditionOf(o, "Ready")?.status).toBe("True");
    expect(conditionOf(o, "Synced")?.message).toContain("versioning");
    await sleep(POLL_MS * 4);
    expect(await client.getVersioning(name)).not.toBe("Enabled");
    expect(await client.getTags(name)).toEqual({});
    await buckets().delete("bucket");
    await buckets().waitForGone("bucket", 30_000);
    expect(await client.headBucket(name)).toBe("Present");
  });
});

const buckets = () => of(bucketCrd);
