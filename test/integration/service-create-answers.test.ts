/**
 * Create answers in the shapes other services may give (`createAnswerShape`: the key bare
 * or in an object), against a real API server and the emulator: under each, a NasVolume
 * and a TrainingJob read their subscription key from the answer and become Ready, and a
 * NasVolume and a TrainingJob whose answer is lost (the order acts, then answers HTTP 500)
 * are found by their token, as are those whose answer holds the key in a field the client
 * does not read (without service.subscriptionResult.keyField); each with exactly one remote
 * resource, ordered once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { trainingJobController } from "../../src/controllers/trainingjob/controller.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { trainingJobCrd } from "../../src/crds/trainingjob.js";
import type { CreateAnswerShape } from "../../src/emulator/id-formats.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";

const SHAPES: CreateAnswerShape[] = ["subscriptionKey", "keyObject", "orderId", "keyAndInstanceId"];
const CREATES = ["subscribeNas", "createTrainingTask"] as const;
const actsThenFails = (endpoint: string) =>
  ({ kind: "error", endpoint, acting: true, httpStatus: 500, times: 1 }) as const;
const ready = (o: KubeObject) => conditionOf(o, "Ready")?.status === "True";
const idOf = (o: KubeObject) => o.metadata?.annotations?.["aidc.io/external-id"] ?? "";

describe("create answers in other shapes", () => {
  let op: TestOperator;
  let nas: ObjectsOf;
  let jobs: ObjectsOf;

  beforeAll(async () => {
    const namespace = await createNamespace(adminKubeConfig(), "create-answers");
    op = await startTestOperator({
      controllers: [nasVolumeController, trainingJobController],
      namespaces: [namespace],
      emulatorOptions: { subscriptionDelayMs: 300 },
    });
    nas = new ObjectsOf(op.kube, nasVolumeCrd, namespace);
    jobs = new ObjectsOf(op.kube, trainingJobCrd, namespace);
  }, 60_000);
  afterAll(async () => {
    await op?.stop();
  });

  /** Creates a NasVolume and a TrainingJob named `name`; their objects once Ready. */
  async function createBoth(name: string): Promise<KubeObject[]> {
    await nas.create(name, { productCode: "nas.capacity.standard", capacityGB: 100 });
    await jobs.create(name, {
      image: "registry.example.com/ml/train:1",
      productCode: "train.cpu.16",
      workerCount: 1,
    });
    return Promise.all([nas.waitFor(name, ready, 30_000), jobs.waitFor(name, ready, 30_000)]);
  }

  /** Ready objects each bound to one of the `before` + 1 remote resources, ordered once. */
  function expectOneEach(objects: KubeObject[], before: number[], since: number) {
    const state = op.emulator.state;
    expect([state.nas.size, state.tasks.size]).toEqual(before.map((n) => n + 1));
    expect(state.nas.has(idOf(objects[0] as KubeObject))).toBe(true);
    expect(state.tasks.has(idOf(objects[1] as KubeObject))).toBe(true);
    for (const endpoint of CREATES) {
      expect(op.emulator.requestLog.read({ since, endpoint }), endpoint).toHaveLength(1);
    }
  }

  /** Whether the result of the NAS's and the task's subscription was polled since `since`. */
  function keysPolled(objects: KubeObject[], since: number): boolean[] {
    const polled = op.emulator.requestLog
      .read({ since })
      .filter((e) => e.endpoint?.endsWith("SubscriptionResult"))
      .map((e) => e.path);
    return ["nas", "training"].map((kind, i) => {
      const id = idOf(objects[i] as KubeObject);
      const subs = [...op.emulator.state.subscriptions.values()];
      const sub = subs.find((s) => s.kind === kind && s.instanceId === id);
      return sub !== undefined && polled.some((p) => p.endsWith(`/${sub.key}`));
    });
  }

  it("finds by their token creates whose answer holds the key in a field it does not read", async () => {
    await op.admin.configure({ createAnswerShape: "renamedField" });
    const state = op.emulator.state;
    const before = [state.nas.size, state.tasks.size];
    const since = op.emulator.requestLog.lastSeq();
    const objects = await createBoth("renamed-field");
    expectOneEach(objects, before, since);
    expect(keysPolled(objects, since)).toEqual([false, false]);
  }, 60_000);

  describe.each(SHAPES)("answered as %s", (shape) => {
    beforeAll(async () => {
      await op.admin.configure({ createAnswerShape: shape });
    });

    it("reads the key from the answer and polls its result", async () => {
      const state = op.emulator.state;
      const before = [state.nas.size, state.tasks.size];
      const since = op.emulator.requestLog.lastSeq();
      const objects = await createBoth(`read-${shape.toLowerCase()}`);
      expectOneEach(objects, before, since);
      expect(keysPolled(objects, since)).toEqual([true, true]);
    }, 60_000);

    it("finds creates whose answer was lost by their token", async () => {
      const state = op.emulator.state;
      const before = [state.nas.size, state.tasks.size];
      const since = op.emulator.requestLog.lastSeq();
      op.emulator.faults.set(CREATES.map(actsThenFails));
      try {
        expectOneEach(await createBoth(`lost-${shape.toLowerCase()}`), before, since);
      } finally {
        op.emulator.faults.clear();
      }
      for (const endpoint of CREATES) {
        const [answer] = op.emulator.requestLog.read({ since, endpoint });
        expect(answer?.acted, endpoint).toBe(true);
      }
    }, 60_000);
  });
});
