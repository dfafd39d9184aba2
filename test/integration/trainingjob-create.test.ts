/**
 * TrainingJob creation against the real API server and the emulator: the exact
 * create bodies of DIRECT, TEMPLATE and COPY jobs, the priority a job inherits,
 * waiting for a NasVolume, and preflight refusals that place no order.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ControllerFactory } from "../../src/controllers/index.js";
import { trainingJobController } from "../../src/controllers/trainingjob/controller.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";
import {
  conditionOf,
  createJob,
  createReadyNasVolume,
  createRequests,
  createTemplate,
  getJob,
  taskIdsNamed,
  waitForJob,
} from "../support/trainingjobs.js";

const fast: ControllerFactory = (deps) =>
  trainingJobController(deps, { subscriptionPollMs: 200, visibilityGraceMs: 2_000 });

const token = expect.stringMatching(/^[0-9a-f-]{36}$/);
/** The owner mark (managed/tenancy.ts): hashes of the namespace and the object. */
const owner = expect.stringMatching(/^[0-9a-f]{16}\.[0-9a-f]{16}$/);
const IMAGE = "registry.example.com/ml/train:1";

let op: TestOperator;
let ns: string;

beforeAll(async () => {
  ns = await createNamespace(adminKubeConfig(), "tj-create");
  op = await startTestOperator({ controllers: [fast], namespaces: [ns] });
}, 60_000);

afterAll(async () => {
  await op?.stop();
});

/** A TrainingTemplate `name` with `spec`, bound to a template seeded in the emulator; its id. */
async function seededTemplate(
  name: string,
  spec: Record<string, unknown>,
  status: Record<string, unknown> = {},
): Promise<string> {
  const seeded = await op.admin.seed({ templates: [{ name, image: IMAGE }] });
  const templateId = seeded.templates[0] as string;
  await createTemplate(op.kube, ns, name, spec, templateId, status);
  return templateId;
}

/** The create body of TEMPLATE job `name` with `fields` of IMAGE on train.cpu.16 at priority 3. */
const templateCreate = (name: string, templateId: string, fields: Record<string, unknown>) => ({
  name,
  createType: "TEMPLATE",
  templateId,
  priority: 3,
  image: IMAGE,
  productCode: "train.cpu.16",
  ...fields,
  env: { AIDC_CLIENT_TOKEN: token, AIDC_OWNER: owner },
});

const running = (j: { status?: { taskId?: string; phase?: string } }) =>
  Boolean(j.status?.taskId) && j.status?.phase === "Running";

describe("a DIRECT TrainingJob", () => {
  it("is created once with the exact request body, trainingFramwork on the wire, and then runs", async () => {
    const seeded = await op.admin.seed({ nas: [{ name: "direct-data" }] });
    const storageId = seeded.nas[0] as string;
    await createJob(op.kube, ns, "direct", {
      taskName: "direct-task",
      description: "first run",
      image: IMAGE,
      productCode: "train.cpu.16",
      workerCount: 2,
      trainingType: "PRE_TRAINING",
      trainingFramework: "PyTorch",
      imageType: "general",
      env: { EPOCHS: "3" },
      startCommand: "python train.py",
      storage: [{ storageId, mountPath: "/data", readOnly: false }],
    });
    // Ready comes from the task alone; its storages and pods follow soon (first look).
    const job = await waitForJob(
      op.kube,
      ns,
      "direct",
      (j) => running(j) && j.status?.pods !== undefined && !conditionOf(j, "PodsObserved"),
    );
    const creates = await createRequests(op.admin, "direct-task");
    expect(creates).toHaveLength(1);
    expect(creates[0]?.body).toEqual({
      name: "direct-task",
      createType: "DIRECT",
      desc: "first run",
      priority: 3,
      image: IMAGE,
      productCode: "train.cpu.16",
      workerCount: 2,
      trainingType: "pre_training",
      trainingFramwork: "pytorch",
      imageType: "general",
      env: { EPOCHS: "3", AIDC_CLIENT_TOKEN: token, AIDC_OWNER: owner },
      startCommand: "python train.py",
      storageConfigs: [{ storageId, mountPath: "/data", onlyRead: false }],
    });
    expect(await taskIdsNamed(op.admin, "direct-task")).toEqual([job.status?.taskId]);
    expect(job.metadata?.annotations?.["aidc.io/external-id"]).toBe(job.status?.taskId);
    expect(job.metadata?.finalizers).toContain("aidc.io/trainingjob");
    expect(conditionOf(job, "Ready")).toMatchObject({ status: "True", reason: "TaskRunning" });
    expect(conditionOf(job, "Synced")?.status).toBe("True");
    expect(conditionOf(job, "ReferencesResolved")?.status).toBe("True");
    // No CRD default fills in the priority; the operator sends the service's 3 and the
    // status shows what the task runs at.
    expect(job.spec.priority).toBeUndefined();
    expect(job.status).toMatchObject({
      remoteStatus: "RUNNING",
      priority: 3,
      subscription: { outcome: "Succeeded" },
      resource: { productCode: "train.cpu.16", workerCount: 2 },
      storages: [{ storageId, name: "direct-data" }],
    });
    expect(job.status?.pods).toHaveLength(2);
    expect(job.status?.pods?.[0]?.ports?.[0]).toMatchObject({ port: 22, custom: false });
    expect(job.status?.execInfos?.length).toBeGreaterThan(0);
  }, 60_000);
});

describe("references", () => {
  it("waits for its NasVolume with ReferencesResolved=False and no order, then proceeds", async () => {
    const seeded = await op.admin.seed({ nas: [{ name: "later-data" }] });
    const storageId = seeded.nas[0] as string;
    await createJob(op.kube, ns, "waits", {
      image: IMAGE,
      productCode: "train.cpu.16",
      workerCount: 1,
      storage: [{ nasVolumeRef: { name: "later" } }],
    });
    const waiting = await waitForJob(
      op.kube,
      ns,
      "waits",
      (j) => conditionOf(j, "ReferencesResolved")?.status === "False",
    );
    expect(conditionOf(waiting, "ReferencesResolved")?.reason).toBe("NasVolumeNotFound");
    expect(conditionOf(waiting, "Ready")?.status).toBe("False");
    expect(await createRequests(op.admin, "waits")).toHaveLength(0);

    await createReadyNasVolume(op.kube, ns, "later", storageId);
    const job = await waitForJob(op.kube, ns, "waits", running);
    expect(conditionOf(job, "ReferencesResolved")?.status).toBe("True");
    const [create] = await createRequests(op.admin, "waits");
    expect((create?.body as { storageConfigs?: unknown } | undefined)?.storageConfigs).toEqual([
      { storageId, storageType: "NAS", onlyRead: true },
    ]);
  }, 60_000);

  it("waits for the NasVolume its template names, then proceeds once it is Ready", async () => {
    const seeded = await op.admin.seed({ nas: [{ name: "tpl-later-data" }] });
    const storageId = seeded.nas[0] as string;
    await seededTemplate("tpl-nas", {
      image: IMAGE,
      productCode: "train.cpu.16",
      workerCount: 1,
      storage: [{ nasVolumeRef: { name: "tpl-later" } }],
    });
    await createJob(op.kube, ns, "tpl-waits", {
      createType: "TEMPLATE",
      templateRef: { name: "tpl-nas" },
    });
    const waiting = await waitForJob(
      op.kube,
      ns,
      "tpl-waits",
      (j) => conditionOf(j, "ReferencesResolved")?.status === "False",
    );
    expect(conditionOf(waiting, "ReferencesResolved")?.reason).toBe("NasVolumeNotFound");
    await createReadyNasVolume(op.kube, ns, "tpl-later", storageId);
    // No watch of the job names the template's NasVolume: the wait is looked at every poll.
    const job = await waitForJob(op.kube, ns, "tpl-waits", running, 10_000);
    expect(conditionOf(job, "ReferencesResolved")?.status).toBe("True");
  }, 60_000);

  it("creates from a TrainingTemplate with its id and configuration", async () => {
    const templateId = await seededTemplate("tpl-a", {
      image: IMAGE,
      productCode: "train.cpu.16",
      workerCount: 1,
      startCommand: "run",
    });
    await createJob(op.kube, ns, "from-tpl", {
      createType: "TEMPLATE",
      templateRef: { name: "tpl-a" },
    });
    const job = await waitForJob(op.kube, ns, "from-tpl", running);
    // The status shows what the task inherited (the IMAGE and WORKERS columns read it).
    expect(job.status?.config).toMatchObject({
      name: "from-tpl",
      source: { type: "TEMPLATE", id: templateId },
      image: IMAGE,
      productCode: "train.cpu.16",
      workerCount: 1,
      priority: 3,
      startCommand: "run",
      envKeys: ["AIDC_CLIENT_TOKEN", "AIDC_OWNER"],
    });
    const creates = await createRequests(op.admin, "from-tpl");
    expect(creates.map((c) => c.body)).toEqual([
      templateCreate("from-tpl", templateId, { workerCount: 1, startCommand: "run" }),
    ]);
  }, 60_000);

  it("creates from a template saved from a TrainingJob with that job's configuration", async () => {
    await createJob(op.kube, ns, "saved-src", {
      image: IMAGE,
      productCode: "train.cpu.16",
      workerCount: 2,
      startCommand: "train",
    });
    await waitForJob(op.kube, ns, "saved-src", running);
    // Its spec holds no configuration: the template is the job's task, saved.
    const templateId = await seededTemplate("saved-tpl", {
      fromTrainingJobRef: { name: "saved-src" },
    });
    await createJob(op.kube, ns, "from-saved", {
      createType: "TEMPLATE",
      templateRef: { name: "saved-tpl" },
    });
    await waitForJob(op.kube, ns, "from-saved", running);
    const creates = await createRequests(op.admin, "from-saved");
    expect(creates.map((c) => c.body)).toEqual([
      templateCreate("from-saved", templateId, { workerCount: 2, startCommand: "train" }),
    ]);
  }, 60_000);

  it("creates from a saved template whose job is gone with what the service stores of it", async () => {
    // The template's controller mirrors the service's template into status.config.
    const templateId = await seededTemplate(
      "stored-tpl",
      { fromTrainingJobRef: { name: "deleted-src" } },
      { config: { image: IMAGE, productCode: "train.cpu.16", workerCount: 3, startCommand: "go" } },
    );
    await createJob(op.kube, ns, "from-stored", {
      createType: "TEMPLATE",
      templateRef: { name: "stored-tpl" },
    });
    await waitForJob(op.kube, ns, "from-stored", running);
    const creates = await createRequests(op.admin, "from-stored");
    expect(creates.map((c) => c.body)).toEqual([
      templateCreate("from-stored", templateId, { workerCount: 3, startCommand: "go" }),
    ]);
  }, 60_000);

  it("copies another TrainingJob's task once that job has one", async () => {
    await createJob(op.kube, ns, "copy", {
      createType: "COPY",
      copyFrom: { name: "copy-source" },
    });
    const waiting = await waitForJob(
      op.kube,
      ns,
      "copy",
      (j) => conditionOf(j, "ReferencesResolved")?.reason === "SourceJobNotFound",
    );
    expect(waiting.status?.taskId).toBeUndefined();
    await createJob(op.kube, ns, "copy-source", {
      image: IMAGE,
      productCode: "train.cpu.16",
      workerCount: 1,
      trainingFramework: "MPI",
    });
    const source = await waitForJob(op.kube, ns, "copy-source", running);
    const copy = await waitForJob(op.kube, ns, "copy", running);
    expect(copy.status?.taskId).not.toBe(source.status?.taskId);
    expect(copy.status?.config).toMatchObject({
      source: { type: "COPY", id: source.status?.taskId },
      image: IMAGE,
      trainingFramework: "MPI",
      workerCount: 1,
    });
    const creates = await createRequests(op.admin, "copy");
    expect(creates.map((c) => c.body)).toEqual([
      {
        name: "copy",
        createType: "COPY",
        sourceTaskId: source.status?.taskId,
        priority: 3,
        image: IMAGE,
        productCode: "train.cpu.16",
        workerCount: 1,
        trainingFramwork: "mpi",
        env: { AIDC_CLIENT_TOKEN: token, AIDC_OWNER: owner },
      },
    ]);
  }, 60_000);
});

describe("inherited priority", () => {
  it("sends the template's priority 1 for a TEMPLATE job and its copy that set none, 3 for a DIRECT one", async () => {
    const seeded = await op.admin.seed({
      templates: [{ name: "tpl-urgent", image: IMAGE, priority: 1 }],
    });
    const templateId = seeded.templates[0] as string;
    await createTemplate(
      op.kube,
      ns,
      "tpl-urgent",
      { image: IMAGE, productCode: "train.cpu.16", workerCount: 1, priority: 1 },
      templateId,
    );
    await createJob(op.kube, ns, "urgent", {
      createType: "TEMPLATE",
      templateRef: { name: "tpl-urgent" },
    });
    await createJob(op.kube, ns, "plain", {
      image: IMAGE,
      productCode: "train.cpu.16",
      workerCount: 1,
    });
    const urgent = await waitForJob(op.kube, ns, "urgent", running);
    const plain = await waitForJob(op.kube, ns, "plain", running);
    expect((await createRequests(op.admin, "urgent")).map((c) => c.body)).toEqual([
      {
        name: "urgent",
        createType: "TEMPLATE",
        templateId,
        priority: 1,
        image: IMAGE,
        productCode: "train.cpu.16",
        workerCount: 1,
        env: { AIDC_CLIENT_TOKEN: token, AIDC_OWNER: owner },
      },
    ]);
    expect((await createRequests(op.admin, "plain")).map((c) => c.body)).toEqual([
      {
        name: "plain",
        createType: "DIRECT",
        priority: 3,
        image: IMAGE,
        productCode: "train.cpu.16",
        workerCount: 1,
        env: { AIDC_CLIENT_TOKEN: token, AIDC_OWNER: owner },
      },
    ]);
    expect(urgent.spec.priority).toBeUndefined();
    expect(urgent.status?.priority).toBe(1);
    expect(plain.status?.priority).toBe(3);

    // A copy of the TEMPLATE job runs at the priority its source runs at.
    await createJob(op.kube, ns, "urgent-again", {
      createType: "COPY",
      copyFrom: { name: "urgent" },
    });
    const again = await waitForJob(op.kube, ns, "urgent-again", running);
    const [copy] = await createRequests(op.admin, "urgent-again");
    expect(copy?.body).toMatchObject({
      createType: "COPY",
      sourceTaskId: urgent.status?.taskId,
      priority: 1,
    });
    expect(again.status?.priority).toBe(1);
  }, 60_000);
});

describe("preflight", () => {
  it("refuses an unknown product with a terminal condition and places no order", async () => {
    await createJob(op.kube, ns, "unknown-product", {
      image: IMAGE,
      productCode: "train.does-not-exist",
      workerCount: 1,
    });
    const job = await waitForJob(
      op.kube,
      ns,
      "unknown-product",
      (j) => conditionOf(j, "Ready")?.reason === "UnknownProductRefused",
    );
    const message = conditionOf(job, "Ready")?.message;
    expect(message).toContain("train.does-not-exist");
    // The closest codes of the emulator's catalog, not the whole list.
    expect(message).toMatch(/closest: (train\.[a-z0-9.]+, ){0,4}train\.[a-z0-9.]+(\b|;)/);
    expect(message).toContain("list them with kubectl get trainingproducts");
    expect(job.status?.phase).toBe("Pending");
    expect(await createRequests(op.admin, "unknown-product")).toHaveLength(0);
  }, 60_000);

  it("waits while fewer units remain than workers, and places no order", async () => {
    await createJob(op.kube, ns, "sold-out", {
      image: IMAGE,
      productCode: "train.gpu.h100.1",
      workerCount: 1,
    });
    const job = await waitForJob(
      op.kube,
      ns,
      "sold-out",
      (j) => conditionOf(j, "Ready")?.reason === "InsufficientCapacity",
    );
    expect(conditionOf(job, "Ready")?.message).toContain("0 units left");
    // Polled again (capacity may come back) without ordering.
    await new Promise((r) => setTimeout(r, 1_200));
    expect(await createRequests(op.admin, "sold-out")).toHaveLength(0);
    expect((await getJob(op.kube, ns, "sold-out")).status?.taskId).toBeUndefined();
  }, 60_000);
});
