/**
 * A world for tests of how the operator walks lists (test/integration/service-list-*.test.ts):
 * an emulator answering two records a page, seeded with four CCI instances (two of one
 * name), an operator running the NasVolume, TrainingJob, CciInstance and TrainingTemplate
 * controllers with a short list visibility window, and a NasVolume, TrainingJob and
 * TrainingTemplate of like names per entry of `others`, Ready.
 */
import { afterAll, beforeAll, expect } from "vitest";
import { cciInstanceController } from "../../src/controllers/cciinstance/controller.js";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { trainingJobController } from "../../src/controllers/trainingjob/controller.js";
import { trainingTemplateController } from "../../src/controllers/trainingtemplate/controller.js";
import { cciInstanceCrd } from "../../src/crds/cciinstance.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { trainingJobCrd } from "../../src/crds/trainingjob.js";
import { trainingTemplateCrd } from "../../src/crds/trainingtemplate.js";
import type { EmulatorOptions } from "../../src/emulator/server.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { adminKubeConfig, createNamespace } from "./kube.js";
import { ObjectsOf } from "./managed.js";
import { startTestOperator, TEST_API_KEY, type TestOperator } from "./operator.js";

/** The list visibility window (and template grace) of the world's operator. */
export const WALK_WINDOW_MS = 2_000;
export const WALK_NAS_SPEC = { productCode: "nas.capacity.standard", capacityGB: 100 };
export const WALK_JOB_SPEC = {
  image: "registry.example.com/ml/train:1",
  productCode: "train.cpu.16",
  workerCount: 1,
};

/** The world of {@link startListWalkWorld}. */
export interface ListWalkWorld {
  emulator: RunningEmulator;
  op: TestOperator;
  nas: ObjectsOf;
  jobs: ObjectsOf;
  templates: ObjectsOf;
  cci: ObjectsOf;
  /** The creates of `endpoint` whose body names `name`, as the emulator received them. */
  sent(endpoint: string, name: string): Promise<unknown[]>;
  stop(): Promise<void>;
}

/**
 * The world of {@link startListWalkWorld} for the tests of a describe block: started
 * before them (`options` read then), stopped after; its fields are set once started.
 */
export function useListWalkWorld(options: () => Parameters<typeof startListWalkWorld>[0]) {
  const world = {} as ListWalkWorld;
  let started: ListWalkWorld | undefined;
  beforeAll(async () => {
    started = await startListWalkWorld(options());
    Object.assign(world, started);
  }, 90_000);
  afterAll(async () => {
    await started?.stop();
  });
  return world;
}

/**
 * Starts the world: `emulator` options over the two-a-page emulator, `prefix` of the
 * namespace, `others` the suffixes of the objects made first (store-x, train-x, tpl-x).
 */
export async function startListWalkWorld(options: {
  prefix: string;
  emulator: Partial<EmulatorOptions>;
  others: string[];
  pollIntervalMs?: number;
}): Promise<ListWalkWorld> {
  const emulator = await startEmulator({
    apiKey: TEST_API_KEY,
    subscriptionDelayMs: 300,
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
    ...options.emulator,
  });
  const namespace = await createNamespace(adminKubeConfig(), options.prefix);
  const op = await startTestOperator({
    controllers: [
      nasVolumeController,
      trainingJobController,
      cciInstanceController,
      (deps) => trainingTemplateController(deps, { visibilityGraceMs: WALK_WINDOW_MS }),
    ],
    namespaces: [namespace],
    emulator,
    ...(options.pollIntervalMs === undefined ? {} : { pollIntervalMs: options.pollIntervalMs }),
    config: {
      service: {
        baseUrl: emulator.url,
        allowInsecureHttp: true,
        listVisibilityWindowMs: WALK_WINDOW_MS,
      },
    },
  });
  const world: ListWalkWorld = {
    emulator,
    op,
    nas: new ObjectsOf(op.kube, nasVolumeCrd, namespace),
    jobs: new ObjectsOf(op.kube, trainingJobCrd, namespace),
    templates: new ObjectsOf(op.kube, trainingTemplateCrd, namespace),
    cci: new ObjectsOf(op.kube, cciInstanceCrd, namespace),
    async sent(endpoint, name) {
      const named = JSON.stringify({ name }).slice(1, -1);
      return (await op.admin.requests({ endpoint })).filter((e) =>
        JSON.stringify(e.body).includes(named),
      );
    },
    async stop() {
      await op.stop();
      await emulator.stop();
    },
  };
  const { nas, jobs, templates } = world;
  for (const x of options.others) {
    await nas.create(`store-${x}`, WALK_NAS_SPEC);
    await jobs.create(`train-${x}`, WALK_JOB_SPEC);
    await templates.create(`tpl-${x}`, WALK_JOB_SPEC);
  }
  for (const x of options.others) {
    await nas.waitForCondition(`store-${x}`, "Ready", "True", undefined, 30_000);
    await jobs.waitForCondition(`train-${x}`, "Ready", "True", undefined, 30_000);
    await templates.waitForCondition(`tpl-${x}`, "Ready", "True", undefined, 30_000);
  }
  return world;
}

/**
 * The creates under test (NAS "store", task "train", template "tpl") were each sent once
 * and none was repeated.
 */
export async function expectEachSentOnce(world: ListWalkWorld): Promise<void> {
  for (const [objects, name, endpoint] of [
    [world.nas, "store", "subscribeNas"],
    [world.jobs, "train", "createTrainingTask"],
    [world.templates, "tpl", "createTemplate"],
  ] as const) {
    expect(await world.sent(endpoint, name)).toHaveLength(1);
    expect(await objects.eventReasons(name)).not.toContain("CreateRepeated");
  }
}

/**
 * Creates NAS "store", task "train" and template "tpl", each create acting and then
 * answering HTTP 500 (its answer lost), and answers the three objects once Ready.
 */
export async function createThroughLostAnswers(
  world: ListWalkWorld,
): Promise<[KubeObject, KubeObject, KubeObject]> {
  world.emulator.faults.set(
    ["subscribeNas", "createTrainingTask", "createTemplate"].map((endpoint) => ({
      kind: "error",
      endpoint,
      acting: true,
      httpStatus: 500,
      times: 1,
    })),
  );
  await world.nas.create("store", WALK_NAS_SPEC);
  await world.jobs.create("train", WALK_JOB_SPEC);
  await world.templates.create("tpl", WALK_JOB_SPEC);
  return Promise.all([
    world.nas.waitForCondition("store", "Ready", "True", undefined, 30_000),
    world.jobs.waitForCondition("train", "Ready", "True", undefined, 30_000),
    world.templates.waitForCondition("tpl", "Ready", "True", undefined, 30_000),
  ]);
}
