import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ControllerFactory } from "../../src/controllers/index.js";
import { ANNOTATIONS } from "../../src/controllers/managed/decisions.js";
import { trainingTemplateController } from "../../src/controllers/trainingtemplate/controller.js";
import { trainingJobCrd } from "../../src/crds/trainingjob.js";
import { trainingTemplateCrd } from "../../src/crds/trainingtemplate.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { conditionOf, EVENTS, ObjectsOf } from "../support/managed.js";
import {
  diesAfter,
  startTestOperator,
  TEST_API_KEY,
  type TestOperator,
} from "../support/operator.js";

/** The TrainingTemplate controller against a real API server and the emulator. */
/** The owner mark the body carries in its env (managed/tenancy.ts). */
const owner = expect.stringMatching(/^[0-9a-f]{16}\.[0-9a-f]{16}$/);
/** A description with the owner mark appended, as a list without env still shows it. */
const marked = (desc: string) =>
  expect.stringMatching(new RegExp(`^${desc} \\[aidc-owner:[0-9a-f]{16}\\.[0-9a-f]{16}\\]$`));

describe("TrainingTemplate controller", () => {
  let op: TestOperator;
  let templates: ObjectsOf;
  let jobs: ObjectsOf;
  let namespace = "";

  beforeAll(async () => {
    namespace = await createNamespace(adminKubeConfig(), "ttpl");
    op = await startTestOperator({
      controllers: [(deps) => trainingTemplateController(deps, { visibilityGraceMs: 1_000 })],
      namespaces: [namespace],
      service: { endpoints: { deleteTemplate: "DELETE /v1/training/template/{id}" } },
    });
    templates = new ObjectsOf(op.kube, trainingTemplateCrd, namespace);
    jobs = new ObjectsOf(op.kube, trainingJobCrd, namespace);
  }, 60_000);

  afterAll(async () => {
    await op?.stop();
  });

  const spec = {
    description: "nightly fine-tune",
    trainingType: "PRE_TRAINING",
    trainingFramework: "PyTorch",
    imageType: "general",
    image: "registry.example.com/ml/train:1",
    productCode: "train.gpu.a100.1",
    workerCount: 2,
    env: { EPOCHS: "3" },
    startCommand: "python train.py",
    priority: 2,
    storage: [{ storageId: "nas-000042", mountPath: "/data", readOnly: false }],
  };
  const bodies = async (endpoint: string) =>
    (await op.admin.requests({ endpoint })).map((r) => ({ path: r.path, body: r.body }));
  const templateId = (o: { metadata?: { annotations?: Record<string, string> } }) =>
    o.metadata?.annotations?.[ANNOTATIONS.externalId] ?? "";

  it("creates the template with the exact body and finds its id by name", async () => {
    await templates.create("finetune", spec);
    const obj = await templates.waitForCondition("finetune", "Ready", "True", "Available");
    const id = templateId(obj);
    expect(id).toMatch(/^tpl-/);
    expect(obj.status).toMatchObject({ templateId: id, templateName: "finetune" });
    expect(conditionOf(obj, "Synced")?.status).toBe("True");
    // The stored configuration, env names only.
    const config = await eventually(async () => {
      const t = await templates.get("finetune");
      return (t?.status as { config?: Record<string, unknown> } | undefined)?.config;
    });
    expect(config).toMatchObject({
      name: "finetune",
      image: "registry.example.com/ml/train:1",
      trainingType: "PRE_TRAINING",
      trainingFramework: "PyTorch",
      productCode: "train.gpu.a100.1",
      workerCount: 2,
      priority: 2,
      startCommand: "python train.py",
      envKeys: ["AIDC_OWNER", "EPOCHS"],
    });
    expect(config.source).toBeUndefined();
    expect(await bodies("createTemplate")).toEqual([
      {
        path: "/v1/training/template/create",
        body: {
          name: "finetune",
          desc: marked("nightly fine-tune"),
          trainingType: "PRE_TRAINING",
          trainingFramwork: "PyTorch",
          imageType: "general",
          image: "registry.example.com/ml/train:1",
          env: { EPOCHS: "3", AIDC_OWNER: owner },
          resource: { productCode: "train.gpu.a100.1", workerCount: 2 },
          storageConfigs: [{ storageId: "nas-000042", mountPath: "/data", onlyRead: false }],
          startCommand: "python train.py",
          priority: 2,
        },
      },
    ]);
    expect(await bodies("updateTemplate")).toEqual([]);
  });

  it("sends the full body once on a spec change", async () => {
    await templates.create("retuned", spec);
    const id = templateId(await templates.waitForCondition("retuned", "Ready", "True"));
    const updatesOf = async () =>
      (await bodies("updateTemplate")).filter((u) => u.path.includes(`/${id}/`));
    expect(await updatesOf()).toEqual([]);
    await templates.patchSpec("retuned", { image: "registry.example.com/ml/train:2" });
    const updates = await eventually(async () => {
      const u = await updatesOf();
      return u.length > 0 ? u : undefined;
    });
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await updatesOf()).toEqual(updates);
    expect(updates).toEqual([
      {
        path: `/v1/training/template/${id}/update`,
        body: {
          name: "retuned",
          desc: marked("nightly fine-tune"),
          trainingType: "PRE_TRAINING",
          trainingFramwork: "PyTorch",
          imageType: "general",
          image: "registry.example.com/ml/train:2",
          env: { EPOCHS: "3", AIDC_OWNER: owner },
          resource: { productCode: "train.gpu.a100.1", workerCount: 2 },
          storageConfigs: [{ storageId: "nas-000042", mountPath: "/data", onlyRead: false }],
          startCommand: "python train.py",
          priority: 2,
        },
      },
    ]);
    const remote = (await op.admin.state()).templates.find((t) => t.id === id);
    expect(remote?.image).toBe("registry.example.com/ml/train:2");
  });

  it("saves a TrainingJob's task as the template once", async () => {
    const seeded = await op.admin.seed({ tasks: [{ name: "source-task" }] });
    const taskId = seeded.tasks[0] ?? "";
    await jobs.create("source", {
      image: "registry.example.com/ml/train:1",
      productCode: "train.cpu.16",
      workerCount: 1,
    });
    await op.kube.patch(
      trainingJobCrd,
      { namespace, name: "source" },
      { status: { taskId } },
      { subresource: "status" },
    );
    await templates.create("from-job", {
      fromTrainingJobRef: { name: "source" },
      description: "saved",
    });
    const obj = await templates.waitForCondition("from-job", "Ready", "True");
    expect(obj.status).toMatchObject({ sourceTaskId: taskId, templateName: "from-job" });
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await bodies("saveTrainingTaskAsTemplate")).toEqual([
      {
        path: `/v1/training/instance/${taskId}/saveAsTemplate`,
        body: { name: "from-job", desc: marked("saved") },
      },
    ]);
  });

  it("refuses a name another template already has, without creating", async () => {
    await op.service.createTemplate({ name: "taken", image: "x" });
    await templates.create("taken", spec);
    await templates.waitForCondition("taken", "Ready", "False", "NameTakenRefused");
    const creates = (await bodies("createTemplate")).filter(
      (c) => (c.body as { name?: string }).name === "taken",
    );
    expect(creates).toHaveLength(1);
  });

  it("leaves the template on Orphan and deletes it on Delete", async () => {
    await templates.create("kept", { ...spec, storage: undefined });
    const kept = templateId(await templates.waitForCondition("kept", "Ready", "True"));
    await templates.delete("kept");
    await templates.waitForGone("kept");
    expect((await op.admin.state()).templates.map((t) => t.id)).toContain(kept);

    await templates.create("dropped", { ...spec, storage: undefined, deletionPolicy: "Delete" });
    const dropped = templateId(await templates.waitForCondition("dropped", "Ready", "True"));
    await templates.delete("dropped");
    await templates.waitForGone("dropped");
    expect((await op.admin.state()).templates.map((t) => t.id)).not.toContain(dropped);
    expect((await bodies("deleteTemplate")).map((d) => d.path)).toEqual([
      `/v1/training/template/${dropped}`,
    ]);
  });

  it("creates exactly one template when the operator dies between the create and the id lookup", async () => {
    const ns = await createNamespace(adminKubeConfig(), "ttpl-crash");
    let created = false;
    const controllers: ControllerFactory[] = [
      (deps) => trainingTemplateController(deps, { visibilityGraceMs: 1_000 }),
    ];
    const first = await startTestOperator({
      controllers,
      namespaces: [ns],
      emulator: op.emulator,
      shutdownTimeoutMs: 300,
      makeService: diesAfter("createTemplate", () => {
        created = true;
      }),
    });
    const crashed = new ObjectsOf(first.kube, trainingTemplateCrd, ns);
    try {
      await crashed.create("crashed", { ...spec, storage: undefined });
      await eventually(async () => created);
    } finally {
      await first.stop();
    }
    const second = await startTestOperator({
      controllers,
      namespaces: [ns],
      emulator: op.emulator,
    });
    try {
      const obj = await crashed.waitForCondition("crashed", "Ready", "True");
      const named = (await op.admin.state()).templates.filter((t) => t.name === "crashed");
      expect(named.map((t) => t.id)).toEqual([templateId(obj)]);
      await crashed.waitForEvents("crashed", ["Recovered"]);
      // The template found is the body sent: no update follows.
      const updates = (await bodies("updateTemplate")).filter((u) =>
        u.path.includes(`/${templateId(obj)}/`),
      );
      expect(updates).toEqual([]);
    } finally {
      await second.stop();
    }
  });

  it("sends no update to a template found by name after its create answer was lost", async () => {
    await op.admin.setFaults([
      { kind: "error", endpoint: "createTemplate", acting: true, httpStatus: 500, times: 1 },
    ]);
    try {
      await templates.create("lost-answer", { ...spec, storage: undefined });
      const obj = await templates.waitForCondition("lost-answer", "Ready", "True");
      await templates.waitForEvents("lost-answer", ["Recovered"]);
      const id = templateId(obj);
      const named = (await op.admin.state()).templates.filter((t) => t.name === "lost-answer");
      expect(named.map((t) => t.id)).toEqual([id]);
      // A later look (the poll interval) still finds nothing to change.
      await new Promise((r) => setTimeout(r, 2_000));
      expect((await bodies("updateTemplate")).filter((u) => u.path.includes(`/${id}/`))).toEqual(
        [],
      );
      const creates = (await bodies("createTemplate")).filter(
        (c) => (c.body as { name?: string }).name === "lost-answer",
      );
      expect(creates).toHaveLength(1);
    } finally {
      await op.admin.setFaults([]);
    }
  });

  it("creates exactly one template when the list fails right after the create", async () => {
    // A first template settles the once-per-connection probe of the list, so the next
    // lists are the create's own: its preflight's goes through (skip 1), the read-back
    // right after the create answers 500 on every attempt (3 in tests). That proves
    // nothing about the create: the template exists, is found by name later, and is
    // never created a second time.
    await templates.create("readback-first", { ...spec, storage: undefined });
    await templates.waitForCondition("readback-first", "Ready", "True");
    await op.admin.setFaults([
      { kind: "error", endpoint: "listTemplates", skip: 1, times: 3, status: 500 },
    ]);
    try {
      await templates.create("readback", { ...spec, storage: undefined });
      const obj = await templates.waitForCondition("readback", "Ready", "True");
      const named = (await op.admin.state()).templates.filter((t) => t.name === "readback");
      expect(named.map((t) => t.id)).toEqual([templateId(obj)]);
      expect(await op.admin.faults()).toEqual([]);
    } finally {
      await op.admin.setFaults([]);
    }
  });

  it("stops with CreateOutcomeUnknown naming the template name when a lost create finds two templates of it", async () => {
    // A restored object whose create was sent but never recorded (create-pending, no
    // id), and two templates of its name in the service: which one is its own cannot be
    // decided. Templates carry no client token, so the message names what they are
    // looked up by, their name.
    await op.service.createTemplate({ name: "twice", image: "x" });
    await op.service.createTemplate({ name: "twice", image: "y" });
    const marker = JSON.stringify({
      token: "t-lost",
      at: new Date(Date.now() - 60_000).toISOString(),
      generation: 1,
    });
    await templates.create(
      "twice",
      { ...spec, storage: undefined },
      { [ANNOTATIONS.createPending]: marker },
    );
    const stuck = await templates.waitForCondition(
      "twice",
      "Synced",
      "False",
      "CreateOutcomeUnknown",
    );
    const message = conditionOf(stuck, "Synced")?.message ?? "";
    expect(message).toMatch(/^2 remote resources carry this object's template name "twice" \(tpl-/);
    expect(message).not.toMatch(/client token/);
    await templates.waitForEvents("twice", ["CreateOutcomeUnknown"]);
    const named = (await op.admin.state()).templates.filter((t) => t.name === "twice");
    expect(named).toHaveLength(2);
  });

  it("puts the API key in no status, annotation or event", async () => {
    await templates.create("keyless", { ...spec, storage: undefined });
    await templates.waitForCondition("keyless", "Ready", "True");
    const objects = await op.kube.list(trainingTemplateCrd, namespace);
    const events = await op.kube.list(EVENTS, namespace);
    expect(objects.items.length).toBeGreaterThan(0);
    expect(JSON.stringify([objects, events])).not.toContain(TEST_API_KEY);
  });
});
