/**
 * Lists in the orders other services may give (`listOrder`: oldest first, newest first,
 * by name), walked two records a page, against a real API server and the emulator:
 * under each, a NasVolume, a TrainingJob and a TrainingTemplate whose creates acted and
 * answered HTTP 500 are found once (by token, by name) among others of like names,
 * a NAS's and a template's creates that never acted are proven absent and sent once
 * more, and a CciInstance binds by a name one instance has, not by one two have.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cciInstanceController } from "../../src/controllers/cciinstance/controller.js";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { trainingJobController } from "../../src/controllers/trainingjob/controller.js";
import { trainingTemplateController } from "../../src/controllers/trainingtemplate/controller.js";
import { cciInstanceCrd } from "../../src/crds/cciinstance.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { trainingJobCrd } from "../../src/crds/trainingjob.js";
import { trainingTemplateCrd } from "../../src/crds/trainingtemplate.js";
import type { ListOrder } from "../../src/emulator/behaviour.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import {
  startTestOperator,
  TEST_API_KEY,
  type TestOperator,
  wireData,
} from "../support/operator.js";

const WINDOW_MS = 2_000;
const NAS_SPEC = { productCode: "nas.capacity.standard", capacityGB: 100 };
const JOB_SPEC = {
  image: "registry.example.com/ml/train:1",
  productCode: "train.cpu.16",
  workerCount: 1,
};
const actsThenFails = (endpoint: string) =>
  ({ kind: "error", endpoint, acting: true, httpStatus: 500, times: 1 }) as const;
/** Objects made before the one under test: like names, so that each lookup lists them all. */
const OTHERS = ["a", "b", "c"];

describe.each<ListOrder>(["oldestFirst", "newestFirst", "byName"])("lists %s", (listOrder) => {
  let emulator: RunningEmulator;
  let op: TestOperator;
  let nas: ObjectsOf;
  let jobs: ObjectsOf;
  let templates: ObjectsOf;
  let cci: ObjectsOf;

  beforeAll(async () => {
    emulator = await startEmulator({
      apiKey: TEST_API_KEY,
      subscriptionDelayMs: 300,
      listOrder,
      pageSizeCap: 2,
      // Two instances of one name, made apart: on different pages in some orders.
      seed: {
        cci: [
          { id: "nb-1", name: "nb-alone" },
          { id: "nb-2", name: "nb-twin" },
          { id: "nb-3", name: "nb-other" },
          { id: "nb-4", name: "nb-twin" },
        ],
      },
    });
    const namespace = await createNamespace(adminKubeConfig(), `order-${listOrder.toLowerCase()}`);
    op = await startTestOperator({
      controllers: [
        nasVolumeController,
        trainingJobController,
        cciInstanceController,
        (deps) => trainingTemplateController(deps, { visibilityGraceMs: WINDOW_MS }),
      ],
      namespaces: [namespace],
      emulator,
      config: {
        service: {
          baseUrl: emulator.url,
          allowInsecureHttp: true,
          listVisibilityWindowMs: WINDOW_MS,
        },
      },
    });
    nas = new ObjectsOf(op.kube, nasVolumeCrd, namespace);
    jobs = new ObjectsOf(op.kube, trainingJobCrd, namespace);
    templates = new ObjectsOf(op.kube, trainingTemplateCrd, namespace);
    cci = new ObjectsOf(op.kube, cciInstanceCrd, namespace);
    for (const x of OTHERS) {
      await nas.create(`store-${x}`, NAS_SPEC);
      await jobs.create(`train-${x}`, JOB_SPEC);
      await templates.create(`tpl-${x}`, JOB_SPEC);
    }
    for (const x of OTHERS) {
      await nas.waitForCondition(`store-${x}`, "Ready", "True", undefined, 30_000);
      await jobs.waitForCondition(`train-${x}`, "Ready", "True", undefined, 30_000);
      await templates.waitForCondition(`tpl-${x}`, "Ready", "True", undefined, 30_000);
    }
  }, 90_000);
  afterAll(async () => {
    await op?.stop();
    await emulator?.stop();
  });

  const named = (name: string) => (e: { body?: unknown }) =>
    JSON.stringify(e.body).includes(`"name":"${name}"`);
  const sent = async (endpoint: string, name: string) =>
    (await op.admin.requests({ endpoint })).filter(named(name));
  const remote = () => ({
    nas: [...emulator.state.nas.values()].map((n) => n.name),
    tasks: [...emulator.state.tasks.values()].map((t) => t.name),
    templates: [...emulator.state.templates.values()].map((t) => String(t.fields.name)),
  });
  const count = (names: string[], name: string) => names.filter((n) => n === name).length;

  it("finds creates that acted and answered 500 once, by token and by name", async () => {
    const page = await wireData(emulator, "/v1/nasStorage/instance/list?pageNo=1&pageSize=2");
    // The first page in the order of the mode: of the NAS as made (their orders resolved
    // in any order), the first two, the last two newest first, or the first two by name.
    const made = [...emulator.state.nas.values()].map((n) => n.name);
    const first = {
      oldestFirst: made.slice(0, 2),
      newestFirst: made.slice(-2).reverse(),
      byName: [...made].sort().slice(0, 2),
    }[listOrder];
    expect((page.records as { name: string }[]).map((r) => r.name)).toEqual(first);
    emulator.faults.set([
      actsThenFails("subscribeNas"),
      actsThenFails("createTrainingTask"),
      actsThenFails("createTemplate"),
    ]);
    await nas.create("store", NAS_SPEC);
    await jobs.create("train", JOB_SPEC);
    await templates.create("tpl", JOB_SPEC);
    const [n, j, t] = await Promise.all([
      nas.waitForCondition("store", "Ready", "True", undefined, 30_000),
      jobs.waitForCondition("train", "Ready", "True", undefined, 30_000),
      templates.waitForCondition("tpl", "Ready", "True", undefined, 30_000),
    ]);
    const byName = (name: string, records: Map<string, { id: string; name?: string }>) =>
      [...records.values()].find((r) => r.name === name)?.id;
    expect((n.status as { storageId?: string }).storageId).toBe(
      byName("store", emulator.state.nas),
    );
    expect((j.status as { taskId?: string }).taskId).toBe(byName("train", emulator.state.tasks));
    const template = [...emulator.state.templates.values()].find((r) => r.fields.name === "tpl");
    expect((t.status as { templateId?: string }).templateId).toBe(template?.id);
    // Walked past the first page: the lookups read the others too.
    const walked = await op.admin.requests({ endpoint: "listNas" });
    expect(walked.some((e) => e.query.pageNo === "2")).toBe(true);

    await new Promise((r) => setTimeout(r, WINDOW_MS + 1_000));
    const now = remote();
    expect(count(now.nas, "store")).toBe(1);
    expect(count(now.tasks, "train")).toBe(1);
    expect(count(now.templates, "tpl")).toBe(1);
    expect(await sent("subscribeNas", "store")).toHaveLength(1);
    expect(await sent("createTrainingTask", "train")).toHaveLength(1);
    expect(await sent("createTemplate", "tpl")).toHaveLength(1);
    for (const [objects, name] of [
      [nas, "store"],
      [jobs, "train"],
      [templates, "tpl"],
    ] as const) {
      expect(await objects.eventReasons(name)).not.toContain("CreateRepeated");
    }
  }, 60_000);

  it("proves creates of a NAS and a template that never acted absent and sends each once more", async () => {
    const failsOnce = (endpoint: string) =>
      ({ kind: "error", endpoint, httpStatus: 500, times: 1 }) as const;
    emulator.faults.set([failsOnce("subscribeNas"), failsOnce("createTemplate")]);
    await nas.create("store-gone", NAS_SPEC);
    await templates.create("tpl-gone", JOB_SPEC);
    await nas.waitForCondition("store-gone", "Ready", "True", undefined, 40_000);
    await templates.waitForCondition("tpl-gone", "Ready", "True", undefined, 40_000);
    expect(await sent("subscribeNas", "store-gone")).toHaveLength(2);
    expect(await sent("createTemplate", "tpl-gone")).toHaveLength(2);
    expect(count(remote().nas, "store-gone")).toBe(1);
    expect(count(remote().templates, "tpl-gone")).toBe(1);
    await nas.waitForEvents("store-gone", ["CreateRepeated"]);
    await templates.waitForEvents("tpl-gone", ["CreateRepeated"]);
  }, 60_000);

  it("binds a CCI instance by a name one instance has, and none by a name two have", async () => {
    await cci.create("alone", { name: "nb-alone" });
    await cci.create("twin", { name: "nb-twin" });
    const bound = await cci.waitFor(
      "alone",
      (o) => !!(o.status as { instanceId?: string }).instanceId,
    );
    expect((bound.status as { instanceId?: string }).instanceId).toBe("nb-1");
    const twin = await cci.waitForCondition("twin", "Bound", "False", "AmbiguousName");
    expect(conditionOf(twin, "Bound")?.message).toMatch(/nb-2.*nb-4|nb-4.*nb-2/);
    expect((twin.status as { instanceId?: string }).instanceId).toBeUndefined();
  }, 30_000);
});
