/**
 * TrainingTemplates on a service whose template list leaves out `env` (the emulator's
 * `listsOmitEnv`), with adoption off as by default. A template has no detail read, so
 * the owner mark the operator puts in its env is not seen there; the one it appends to
 * the description is: a template found by name after a lost create answer or a restart
 * is its own by it. One without it (made outside, bound by hand) is refused, the
 * condition naming the env the list leaves out. A create never sent is proven absent by
 * name, which the list shows, and sent again once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ControllerFactory } from "../../src/controllers/index.js";
import { ANNOTATIONS } from "../../src/controllers/managed/decisions.js";
import { trainingTemplateController } from "../../src/controllers/trainingtemplate/controller.js";
import { trainingTemplateCrd } from "../../src/crds/trainingtemplate.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import {
  diesAfter,
  holdsFirst,
  startTestOperator,
  type TestOperator,
  type TestOperatorOptions,
} from "../support/operator.js";

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

  it("makes Ready the template found by name after a lost create answer, by the owner mark of its description", async () => {
    await op.admin.setFaults([
      { kind: "error", endpoint: "createTemplate", acting: true, httpStatus: 500, times: 1 },
    ]);
    try {
      await templates.create("lost", spec);
      const obj = await templates.waitForCondition("lost", "Ready", "True", "Available");
      expect((await named("lost"))[0]?.desc).toMatch(/^nightly \[aidc-owner:[0-9a-f.]{33}\]$/);
      await new Promise((r) => setTimeout(r, 1_500));
      expect(await named("lost")).toHaveLength(1);
      expect(await createsOf("lost")).toHaveLength(1);
      expect(await sent("updateTemplate", idOf(obj))).toEqual([]);
    } finally {
      await op.admin.setFaults([]);
    }
  }, 60_000);

  /**
   * Creates `name` in a namespace of its own with an operator that stops (`first`, its
   * service and flags) once `stopped` resolves, then runs `then` under a second operator.
   */
  const acrossRestart = async (
    name: string,
    first: Partial<TestOperatorOptions>,
    stopped: () => Promise<unknown>,
    then: (objects: ObjectsOf) => Promise<void>,
  ) => {
    const ns = await createNamespace(adminKubeConfig(), `tpl-noenv-${name}`);
    const base = { controllers, namespaces: [ns], config, emulator: op.emulator };
    const dying = await startTestOperator({ ...base, shutdownTimeoutMs: 300, ...first });
    try {
      await new ObjectsOf(dying.kube, trainingTemplateCrd, ns).create(name, spec);
      await stopped();
    } finally {
      await dying.stop();
    }
    const second = await startTestOperator(base);
    try {
      await then(new ObjectsOf(second.kube, trainingTemplateCrd, ns));
    } finally {
      await second.stop();
    }
  };

  it("makes Ready the template its create made when the operator stopped before the answer came", async () => {
    let created = false;
    const makeService = diesAfter("createTemplate", () => {
      created = true;
    });
    await acrossRestart(
      "restarted",
      { makeService },
      () => eventually(async () => created),
      async (objects) => {
        const obj = await objects.waitForCondition("restarted", "Ready", "True", "Available");
        expect(obj.status).toMatchObject({ templateId: idOf(obj) });
        expect(await named("restarted")).toHaveLength(1);
        expect(await createsOf("restarted")).toHaveLength(1);
        expect(await sent("updateTemplate", idOf(obj))).toEqual([]);
      },
    );
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
    const held = holdsFirst("createTemplate");
    await acrossRestart(
      "unsent",
      { makeService: held.makeService, stopsMidCreate: true },
      () => held.held,
      async (objects) => {
        await objects.waitForCondition("unsent", "Ready", "True", undefined, 30_000);
        await objects.waitForEvents("unsent", ["CreateRepeated"]);
        expect(await named("unsent")).toHaveLength(1);
        expect(await createsOf("unsent")).toHaveLength(1);
      },
    );
  }, 60_000);
});
