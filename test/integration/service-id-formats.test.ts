/**
 * Ids and create answers in the shapes other services may give (`idFormat`,
 * `subscriptionKeyFormat`), against a real API server and the emulator: under each, a
 * NasVolume whose create answer is lost (the order acts, then answers HTTP 500) is found
 * by its token and a TrainingJob reads its subscription key; both become Ready with the
 * service's id as text in status and the external-id annotation, follow a scale and a
 * description change, and under deletionPolicy Delete delete their remote resources.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ANNOTATIONS } from "../../src/controllers/managed/decisions.js";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { trainingJobController } from "../../src/controllers/trainingjob/controller.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { trainingJobCrd } from "../../src/crds/trainingjob.js";
import type { IdFormat, SubscriptionKeyFormat } from "../../src/emulator/id-formats.js";
import type { RunningEmulator } from "../../src/emulator/server.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { ObjectsOf } from "../support/managed.js";
import { startTestOperator, type TestOperator, wireData } from "../support/operator.js";

const FORMATS: [IdFormat, SubscriptionKeyFormat, RegExp][] = [
  ["default", "string", /^nas-|^task-/],
  ["numeric", "number", /^\d{15}$/],
  ["uuid", "number", /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/],
];
const actsThenFails = (endpoint: string) =>
  ({ kind: "error", endpoint, acting: true, httpStatus: 500, times: 1 }) as const;
const running = (o: KubeObject) =>
  (o.status as { phase?: string } | undefined)?.phase === "Running";

describe.each(FORMATS)(
  "ids %s, subscription keys as %s",
  (idFormat, subscriptionKeyFormat, shape) => {
    let emulator: RunningEmulator;
    let op: TestOperator;
    let nas: ObjectsOf;
    let jobs: ObjectsOf;

    beforeAll(async () => {
      const namespace = await createNamespace(adminKubeConfig(), `ids-${idFormat}`);
      op = await startTestOperator({
        controllers: [nasVolumeController, trainingJobController],
        namespaces: [namespace],
        emulatorOptions: { subscriptionDelayMs: 300, idFormat, subscriptionKeyFormat },
        // The spec names no deletes; the emulator serves these.
        service: {
          endpoints: {
            deleteNas: "DELETE /v1/nasStorage/instance/{id}",
            deleteTrainingTask: "DELETE /v1/training/instance/{id}",
          },
        },
      });
      emulator = op.emulator;
      nas = new ObjectsOf(op.kube, nasVolumeCrd, namespace);
      jobs = new ObjectsOf(op.kube, trainingJobCrd, namespace);
    });
    afterAll(async () => {
      await op?.stop();
    });

    it("finds lost creates by token, binds the ids as text, updates and deletes", async () => {
      // The NAS order's answer is lost; the task's (the subscription key) arrives.
      emulator.faults.set([actsThenFails("subscribeNas")]);
      await nas.create("store", {
        productCode: "nas.capacity.standard",
        capacityGB: 100,
        deletionPolicy: "Delete",
      });
      await jobs.create("train", {
        image: "registry.example.com/ml/train:1",
        productCode: "train.cpu.16",
        workerCount: 1,
        description: "before",
        deletionPolicy: "Delete",
      });
      const [n, j] = await Promise.all([
        nas.waitForCondition("store", "Ready", "True", "Available", 30_000),
        jobs.waitFor("train", running, 30_000),
      ]);
      const nasIds = [...emulator.state.nas.values()].map((r) => r.id);
      const taskIds = [...emulator.state.tasks.values()].map((r) => r.id);
      expect(nasIds).toHaveLength(1);
      expect(taskIds).toHaveLength(1);
      const [storageId, taskId] = [nasIds[0] as string, taskIds[0] as string];
      expect(storageId).toMatch(shape);
      expect(taskId).toMatch(shape);
      expect(n.status).toMatchObject({ storageId });
      expect(j.status).toMatchObject({ taskId });
      expect(n.metadata?.annotations?.[ANNOTATIONS.externalId]).toBe(storageId);
      expect(j.metadata?.annotations?.[ANNOTATIONS.externalId]).toBe(taskId);
      const wireId = (await wireData(emulator, `/v1/training/instance/${taskId}/detail`)).id;
      expect(typeof wireId).toBe(idFormat === "numeric" ? "number" : "string");
      const keys = [...emulator.state.subscriptions.keys()];
      expect(keys.every((k) => /^\d{15}$/.test(k))).toBe(subscriptionKeyFormat === "number");
      // The task's create answer was read: its key was asked after, not the task looked for.
      const [taskKey] = keys.filter(
        (k) => emulator.state.subscriptions.get(k)?.kind === "training",
      );
      const asked = await op.admin.requests({ endpoint: "getTrainingSubscriptionResult" });
      expect(asked.map((e) => e.path)).toContain(`/v1/subscription/training/result/${taskKey}`);
      expect(await op.admin.requests({ endpoint: "subscribeNas" })).toHaveLength(1);
      expect(await op.admin.requests({ endpoint: "createTrainingTask" })).toHaveLength(1);

      await nas.patchSpec("store", { capacityGB: 160 });
      await jobs.patchSpec("train", { description: "after" });
      await nas.waitFor("store", (o) => (o.status as { capacityGB?: number }).capacityGB === 160);
      await eventually(async () =>
        emulator.state.tasks.get(taskId)?.desc === "after" ? true : undefined,
      );
      expect(emulator.state.nas.get(storageId)?.quotaGB).toBe(160);

      await nas.delete("store");
      await jobs.delete("train");
      await nas.waitForGone("store", 30_000);
      await jobs.waitForGone("train", 30_000);
      expect(emulator.state.nas.has(storageId)).toBe(false);
      expect(emulator.state.tasks.has(taskId)).toBe(false);
    }, 90_000);
  },
);
