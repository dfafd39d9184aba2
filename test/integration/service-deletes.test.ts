/**
 * The operator against a service that refuses the delete of a resource it is releasing
 * already (400 or 409 "already being released"; the spec does not say what a second
 * delete answers). A first delete acts and its answer is lost (a 500), so the client's
 * retry of it is refused: a NasVolume, a BlockVolume and a FileSystem under
 * deletionPolicy Delete still go once the service no longer shows their resources, and
 * leave nothing behind. Against a service answering an unknown id with a 500, the list
 * tells that such a resource is gone, for a read before a repeated delete (a volume's,
 * a file system's) as after one. A TrainingJob and a TrainingTemplate whose task and
 * template the service shows a while after their delete (`taskReleaseDelayMs`) go only once
 * they are gone, with nothing ordered again.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blockVolumeController } from "../../src/controllers/blockvolume/controller.js";
import { fileSystemController } from "../../src/controllers/filesystem/controller.js";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { trainingJobController } from "../../src/controllers/trainingjob/controller.js";
import { trainingTemplateController } from "../../src/controllers/trainingtemplate/controller.js";
import { blockVolumeCrd } from "../../src/crds/blockvolume.js";
import { fileSystemCrd } from "../../src/crds/filesystem.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { trainingJobCrd } from "../../src/crds/trainingjob.js";
import { trainingTemplateCrd } from "../../src/crds/trainingtemplate.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";

/** How long the service shows a deleted resource (Releasing, deleting). */
const RELEASE_MS = 3_000;
const DELETES = ["deleteNas", "deleteVolume", "deleteFileSystem"];
const idOf = (o: KubeObject) => o.metadata?.annotations?.["aidc.io/external-id"] ?? "";
const ready = (o: KubeObject) => conditionOf(o, "Ready")?.status === "True";
/** Faults: each of `endpoints` acts once and then answers HTTP 500, its answer lost. */
const lostAnswers = (endpoints: string[]) =>
  endpoints.map((endpoint) => ({
    kind: "error" as const,
    endpoint,
    acting: true,
    httpStatus: 500,
    times: 1,
  }));
/** The spec names no task or template delete; the emulator serves these. */
const TASK_DELETES = {
  deleteTrainingTask: "DELETE /v1/training/instance/{id}",
  deleteTemplate: "DELETE /v1/training/template/{id}",
};

/** A TrainingJob and a TrainingTemplate `name` under deletionPolicy Delete, once Ready. */
async function readyJobAndTemplate(
  jobs: ObjectsOf,
  templates: ObjectsOf,
  name: string,
): Promise<[KubeObject, KubeObject]> {
  const spec = {
    image: "registry.example.com/ml/train:1",
    productCode: "train.cpu.16",
    workerCount: 1,
    deletionPolicy: "Delete",
  };
  await jobs.create(name, spec);
  await templates.create(name, {
    ...spec,
    trainingType: "PRE_TRAINING",
    trainingFramework: "PyTorch",
  });
  return [await jobs.waitFor(name, ready), await templates.waitFor(name, ready)];
}

describe("a service refusing a second delete of a resource it is releasing", () => {
  let op: TestOperator;
  let nas: ObjectsOf;
  let volumes: ObjectsOf;
  let fileSystems: ObjectsOf;

  beforeAll(async () => {
    const namespace = await createNamespace(adminKubeConfig(), "service-deletes");
    op = await startTestOperator({
      controllers: [nasVolumeController, blockVolumeController, fileSystemController],
      namespaces: [namespace],
      emulatorOptions: {
        subscriptionDelayMs: 300,
        nasReleaseDelayMs: RELEASE_MS,
        volumeTransitionMs: RELEASE_MS,
        fileStorageDelayMs: RELEASE_MS,
      },
      service: { endpoints: { deleteNas: "DELETE /v1/nasStorage/instance/{id}" } },
    });
    nas = new ObjectsOf(op.kube, nasVolumeCrd, namespace);
    volumes = new ObjectsOf(op.kube, blockVolumeCrd, namespace);
    fileSystems = new ObjectsOf(op.kube, fileSystemCrd, namespace);
  }, 60_000);
  afterAll(async () => {
    await op?.stop();
  });

  it.each([409, 400])(
    "deletes a NAS, a volume and a file system whose delete answer was lost and whose repeat is refused with %i",
    async (status) => {
      await op.admin.configure({ repeatDeleteStatus: status });
      const name = `refused-${status}`;
      await nas.create(name, {
        productCode: "nas.capacity.standard",
        capacityGB: 100,
        deletionPolicy: "Delete",
      });
      await volumes.create(name, { sizeGB: 20, volumeType: "ssd", deletionPolicy: "Delete" });
      await fileSystems.create(name, { sizeGB: 10, mounts: [], deletionPolicy: "Delete" });
      const ids: string[] = [];
      for (const objects of [nas, volumes, fileSystems]) {
        ids.push(idOf(await objects.waitFor(name, ready)));
      }
      const since = op.emulator.requestLog.lastSeq();
      op.emulator.faults.set(lostAnswers(DELETES));
      try {
        for (const objects of [nas, volumes, fileSystems]) await objects.delete(name);
        for (const objects of [nas, volumes, fileSystems]) {
          await objects.waitForGone(name, 6 * RELEASE_MS);
        }
      } finally {
        op.emulator.faults.clear();
      }
      const state = op.emulator.state;
      expect(state.nas.has(ids[0] ?? "")).toBe(false);
      expect(state.volumes.records.has(ids[1] ?? "")).toBe(false);
      expect(state.fileSystems.byId.has(ids[2] ?? "")).toBe(false);
      for (const endpoint of DELETES) {
        const answers = op.emulator.requestLog.read({ since, endpoint }).map((r) => r.status);
        // The lost answer, then the refused repeat: each resource was deleted once.
        expect(answers.slice(0, 2), endpoint).toEqual([500, status]);
      }
    },
  );
});

describe("a service answering an unknown id with a 500, whose delete answer is lost", () => {
  let op: TestOperator;
  let jobs: ObjectsOf;
  let templates: ObjectsOf;
  let volumes: ObjectsOf;
  let fileSystems: ObjectsOf;

  beforeAll(async () => {
    const namespace = await createNamespace(adminKubeConfig(), "service-deletes-500");
    op = await startTestOperator({
      controllers: [
        trainingJobController,
        trainingTemplateController,
        blockVolumeController,
        fileSystemController,
      ],
      namespaces: [namespace],
      emulatorOptions: { subscriptionDelayMs: 300, unknownIdStatus: 500 },
      service: { endpoints: TASK_DELETES },
    });
    jobs = new ObjectsOf(op.kube, trainingJobCrd, namespace);
    templates = new ObjectsOf(op.kube, trainingTemplateCrd, namespace);
    volumes = new ObjectsOf(op.kube, blockVolumeCrd, namespace);
    fileSystems = new ObjectsOf(op.kube, fileSystemCrd, namespace);
  }, 60_000);
  afterAll(async () => {
    await op?.stop();
  });

  it("deletes a task and a template whose delete acted and then answered 500 (its repeats: 500, the id unknown)", async () => {
    const [job, template] = await readyJobAndTemplate(jobs, templates, "lost");
    const since = op.emulator.requestLog.lastSeq();
    op.emulator.faults.set(lostAnswers(["deleteTrainingTask", "deleteTemplate"]));
    try {
      await jobs.delete("lost");
      await templates.delete("lost");
      await jobs.waitForGone("lost", 30_000);
      await templates.waitForGone("lost", 30_000);
    } finally {
      op.emulator.faults.clear();
    }
    expect(op.emulator.state.tasks.has(idOf(job))).toBe(false);
    expect(op.emulator.state.templates.has(idOf(template))).toBe(false);
    const deletes = op.emulator.requestLog.read({ since, endpoint: "deleteTrainingTask" });
    expect(deletes[0]?.status).toBe(500);
  });

  it("deletes a volume and a file system whose delete acted and then answered 500 and whose repeat is refused, their reads before the next repeat answering 500 (the id unknown)", async () => {
    await volumes.create("lost", { sizeGB: 20, volumeType: "ssd", deletionPolicy: "Delete" });
    await fileSystems.create("lost", { sizeGB: 10, mounts: [], deletionPolicy: "Delete" });
    const ids: string[] = [];
    for (const objects of [volumes, fileSystems]) {
      ids.push(idOf(await objects.waitFor("lost", ready)));
    }
    const since = op.emulator.requestLog.lastSeq();
    // The repeat meets the resource still deleting: refused, the deletion waits, then
    // the steps before the next delete read an id the service no longer knows.
    await op.admin.configure({ repeatDeleteStatus: 409 });
    op.emulator.faults.set(lostAnswers(["deleteVolume", "deleteFileSystem"]));
    try {
      for (const objects of [volumes, fileSystems]) await objects.delete("lost");
      for (const objects of [volumes, fileSystems]) await objects.waitForGone("lost", 30_000);
    } finally {
      op.emulator.faults.clear();
      await op.admin.configure({ repeatDeleteStatus: 0 });
    }
    expect(op.emulator.state.volumes.records.has(ids[0] ?? "")).toBe(false);
    expect(op.emulator.state.fileSystems.byId.has(ids[1] ?? "")).toBe(false);
    for (const endpoint of ["deleteVolume", "deleteFileSystem"]) {
      const answers = op.emulator.requestLog.read({ since, endpoint }).map((r) => r.status);
      expect(answers.slice(0, 2), endpoint).toEqual([500, 409]);
    }
  });
});

describe("a service releasing tasks and templates a while after their delete", () => {
  let op: TestOperator;
  let jobs: ObjectsOf;
  let templates: ObjectsOf;

  beforeAll(async () => {
    const namespace = await createNamespace(adminKubeConfig(), "service-deletes-release");
    op = await startTestOperator({
      controllers: [trainingJobController, trainingTemplateController],
      namespaces: [namespace],
      emulatorOptions: { subscriptionDelayMs: 300, taskReleaseDelayMs: RELEASE_MS },
      service: { endpoints: TASK_DELETES },
    });
    jobs = new ObjectsOf(op.kube, trainingJobCrd, namespace);
    templates = new ObjectsOf(op.kube, trainingTemplateCrd, namespace);
  }, 60_000);
  afterAll(async () => {
    await op?.stop();
  });

  it.each([
    ["a delete accepted", 0],
    ["a delete whose answer is lost, its repeat refused with 409", 409],
    ["a delete whose answer is lost, its repeat failing with 500", 500],
  ])(
    "keeps a TrainingJob and a TrainingTemplate until their task and template are gone: %s",
    async (_, status) => {
      await op.admin.configure({ repeatDeleteStatus: status });
      const name = `released-${status}`;
      const [job, template] = await readyJobAndTemplate(jobs, templates, name);
      const [taskId, templateId] = [idOf(job), idOf(template)];
      const since = op.emulator.requestLog.lastSeq();
      const endpoints = ["deleteTrainingTask", "deleteTemplate"];
      if (status > 0) op.emulator.faults.set(lostAnswers(endpoints));
      const start = Date.now();
      const goneAfter = async (objects: ObjectsOf) => {
        await objects.waitForGone(name, 6 * RELEASE_MS);
        return Date.now() - start;
      };
      let gone: number[];
      try {
        await jobs.delete(name);
        await templates.delete(name);
        gone = await Promise.all([goneAfter(jobs), goneAfter(templates)]);
      } finally {
        op.emulator.faults.clear();
        await op.admin.configure({ repeatDeleteStatus: 0 });
      }
      // Each gone from the cluster only once the service no longer shows it.
      expect(gone[0], "TrainingJob").toBeGreaterThanOrEqual(RELEASE_MS);
      expect(gone[1], "TrainingTemplate").toBeGreaterThanOrEqual(RELEASE_MS);
      op.emulator.state.advance();
      expect(op.emulator.state.tasks.has(taskId)).toBe(false);
      expect(op.emulator.state.templates.has(templateId)).toBe(false);
      const log = (endpoint: string) => op.emulator.requestLog.read({ since, endpoint });
      expect(log("createTrainingTask")).toHaveLength(0);
      expect(log("createTemplate")).toHaveLength(0);
      for (const endpoint of endpoints) {
        const answers = log(endpoint).map((r) => r.status);
        expect(answers.slice(0, 2), endpoint).toEqual(status > 0 ? [500, status] : [200]);
        // Repeats go while the service shows it: a poll apart, each one call of at most
        // service.retry's 3 attempts (a burst of requests under 150 ms apart).
        const bursts: number[] = [];
        let last = Number.NEGATIVE_INFINITY;
        for (const r of log(endpoint)) {
          const at = Date.parse(r.time);
          if (at - last < 150) bursts[bursts.length - 1] = (bursts.at(-1) ?? 0) + 1;
          else bursts.push(1);
          last = at;
        }
        expect(Math.max(...bursts), endpoint).toBeLessThanOrEqual(3);
      }
    },
  );
});
