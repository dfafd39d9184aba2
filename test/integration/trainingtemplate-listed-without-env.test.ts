/**
 * TrainingTemplates on a service whose template list leaves out `env` (the emulator's
 * `listsOmitEnv`), with adoption off as by default. A template has no detail read, so
 * the owner mark the operator puts in its env is never seen: a template the object's
 * own create just made is its own (the create answered, and the preflight found the
 * name free), and stays so once its status records the id; any other, one found by name
 * after a lost create answer included, cannot be told from another's and is refused,
 * the condition naming the env the list leaves out. A create that answered but whose
 * template the list showed only later is its own too. A create never sent is proven
 * absent by name, which the list shows, and sent again once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ControllerFactory } from "../../src/controllers/index.js";
import { ANNOTATIONS } from "../../src/controllers/managed/create-protocol.js";
import { trainingTemplateController } from "../../src/controllers/trainingtemplate/controller.js";
import { trainingTemplateCrd } from "../../src/crds/trainingtemplate.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import { holdsFirst, startTestOperator, type TestOperator } from "../support/operator.js";

const spec = {
  description: "nightly",
  image: "registry.example.com/ml/train:1",
  env: { EPOCHS: "3" },
  productCode: "train.cpu.16",
  workerCount: 1,
};
/** Adoption off, as by default (the test operator allows it everywhere). */
const config = { adoption: { namespaces: [] } };
const controllers: ControllerFactory[] = [
  (deps) => trainingTemplateController(deps, { visibilityGraceMs: 1_000 }),
];
const idOf = (o: { metadata?: { annotations?: Record<string, string> } } | undefined): string =>
  o?.metadata?.annotations?.[ANNOTATIONS.externalId] ?? "";

describe("TrainingTemplate on a template list without env", () => {
  let op: TestOperator;
  let templates: ObjectsOf;

  beforeAll(async () => {
    const namespace = await createNamespace(adminKubeConfig(), "tpl-noenv");
    op = await startTestOperator({
      controllers,
      namespaces: [namespace],
      emulatorOptions: { listsOmitEnv: true },
      config,
      service: { endpoints: { deleteTemplate: "DELETE /v1/training/template/{id}" } },
    });
    templates = new ObjectsOf(op.kube, trainingTemplateCrd, namespace);
  }, 60_000);

  afterAll(async () => {
    await op?.stop();
  });

  const named = async (name: string) =>
    (await op.admin.state()).templates.filter((t) => t.name === name);
  const sent = async (endpoint: string, id: string) =>
    (await op.admin.requests({ endpoint })).filter((r) => r.path.includes(`/${id}`));
  const createsOf = async (name: string) =>
    (await op.admin.requests({ endpoint: "createTemplate" })).filter(
      (r) => (r.body as { name?: string }).name === name,
    );

  it("makes a template its own create made Ready, updates and deletes it", async () => {
    const listed = await op.service.listTemplates({});
    expect(listed.records.every((t: { env?: unknown }) => t.env === undefined)).toBe(true);
    await templates.create("fresh", { ...spec, deletionPolicy: "Delete" });
    const obj = await templates.waitForCondition("fresh", "Ready", "True", "Available");
    const id = idOf(obj);
    expect(obj.status).toMatchObject({ templateId: id });
    expect(await named("fresh")).toHaveLength(1);
    // The spec's change is sent once; a field changed outside is put back (env is not
    // compared: the list does not show it).
    await templates.patchSpec("fresh", { image: "registry.example.com/ml/train:2" });
    await eventually(async () => (await sent("updateTemplate", id)).length === 1);
    await op.service.updateTemplate(id, { name: "fresh", image: "elsewhere" });
    await eventually(async () => (await sent("updateTemplate", id)).length === 3);
    expect((await named("fresh"))[0]?.image).toBe("registry.example.com/ml/train:2");
    await templates.delete("fresh");
    await templates.waitForGone("fresh");
    expect(await named("fresh")).toEqual([]);
    expect(await sent("deleteTemplate", id)).toHaveLength(1);
    expect(await createsOf("fresh")).toHaveLength(1);
  }, 60_000);

  it("makes Ready the template its answered create made, when the list read right after it fails", async () => {
    // The first test settled the list's probe: the preflight's list passes (skip 1), the
    // read-back after the create fails on every attempt (3 in tests). The create
    // answered, so the one template found by name later is its own.
    await op.admin.setFaults([
      { kind: "error", endpoint: "listTemplates", skip: 1, times: 3, status: 500 },
    ]);
    try {
      await templates.create("readback", spec);
      const obj = await templates.waitForCondition("readback", "Ready", "True", "Available");
      expect(obj.status).toMatchObject({ templateId: idOf(obj) });
      expect(await named("readback")).toHaveLength(1);
      expect(await createsOf("readback")).toHaveLength(1);
      expect(await op.admin.faults()).toEqual([]);
    } finally {
      await op.admin.setFaults([]);
    }
  }, 60_000);

  it("refuses, naming the env the list leaves out, the template found by name after a lost create answer", async () => {
    await op.admin.setFaults([
      { kind: "error", endpoint: "createTemplate", acting: true, httpStatus: 500, times: 1 },
    ]);
    try {
      await templates.create("lost", spec);
      const obj = await templates.waitForCondition("lost", "Ready", "False", "AdoptionRefused");
      expect(conditionOf(obj, "Ready")?.message).toMatch(
        /shows it without env, where the operator's owner mark travels/,
      );
      expect(obj.status).not.toHaveProperty("templateId");
      await new Promise((r) => setTimeout(r, 1_500));
      expect(await named("lost")).toHaveLength(1);
      expect(await createsOf("lost")).toHaveLength(1);
      expect(await sent("updateTemplate", idOf(obj))).toEqual([]);
    } finally {
      await op.admin.setFaults([]);
    }
  }, 60_000);

  it("refuses a template bound by hand, naming the env the list leaves out, and never deletes it", async () => {
    await op.service.createTemplate({ name: "outside", image: "x" });
    const id = String((await named("outside"))[0]?.id);
    await templates.create(
      "bound",
      { ...spec, name: "outside", deletionPolicy: "Delete" },
      { [ANNOTATIONS.externalId]: id },
    );
    const obj = await templates.waitForCondition("bound", "Ready", "False", "AdoptionRefused");
    expect(conditionOf(obj, "Ready")?.message).toContain(
      `(${id}): the service shows it without env`,
    );
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await sent("updateTemplate", id)).toEqual([]);
    await templates.delete("bound");
    await templates.waitForGone("bound");
    expect(await named("outside")).toHaveLength(1);
    expect(await sent("deleteTemplate", id)).toEqual([]);
  }, 60_000);

  it("sends a create never sent once more, proven absent by name, and makes it Ready", async () => {
    const ns = await createNamespace(adminKubeConfig(), "tpl-noenv-unsent");
    const held = holdsFirst("createTemplate");
    const first = await startTestOperator({
      controllers,
      namespaces: [ns],
      config,
      emulator: op.emulator,
      shutdownTimeoutMs: 300,
      makeService: held.makeService,
      stopsMidCreate: true,
    });
    try {
      await new ObjectsOf(first.kube, trainingTemplateCrd, ns).create("unsent", spec);
      await held.held;
    } finally {
      await first.stop();
    }
    const second = await startTestOperator({
      controllers,
      namespaces: [ns],
      config,
      emulator: op.emulator,
    });
    try {
      const objects = new ObjectsOf(second.kube, trainingTemplateCrd, ns);
      await objects.waitForCondition("unsent", "Ready", "True", undefined, 30_000);
      await objects.waitForEvents("unsent", ["CreateRepeated"]);
      expect(await named("unsent")).toHaveLength(1);
      expect(await createsOf("unsent")).toHaveLength(1);
    } finally {
      await second.stop();
    }
  }, 60_000);
});
