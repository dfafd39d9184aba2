/**
 * Crash safety of TrainingJob creation: the operator killed between the create call
 * and its next write (the key, or the id) makes exactly one task (the next operator
 * finds it by its client token); and under injected service faults every job
 * converges to one running task, none duplicated.
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ControllerFactory } from "../../src/controllers/index.js";
import { ANNOTATIONS } from "../../src/controllers/managed/decisions.js";
import { trainingJobController } from "../../src/controllers/trainingjob/controller.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import {
  diesAfter,
  startTestOperator,
  TEST_API_KEY,
  type TestOperator,
} from "../support/operator.js";
import {
  conditionOf,
  createJob,
  createRequests,
  getJob,
  taskIdsNamed,
  waitForJob,
} from "../support/trainingjobs.js";

const fast: ControllerFactory = (deps) =>
  trainingJobController(deps, { subscriptionPollMs: 200, visibilityGraceMs: 1_500 });

const spec = {
  image: "registry.example.com/ml/train:1",
  productCode: "train.cpu.16",
  workerCount: 1,
};
const running = (j: { status?: { taskId?: string; phase?: string } }) =>
  Boolean(j.status?.taskId) && j.status?.phase === "Running";

const started: TestOperator[] = [];
const emulators: RunningEmulator[] = [];
let ns: string;

beforeAll(async () => {
  ns = await createNamespace(adminKubeConfig(), "tj-crash");
});

afterEach(async () => {
  for (const op of started.splice(0)) await op.stop();
  for (const e of emulators.splice(0)) await e.stop();
});

describe("the operator killed between the create and its next write", () => {
  it("leaves exactly one task, which the next operator adopts by its client token", async () => {
    const emulator = await startEmulator({ apiKey: TEST_API_KEY, subscriptionDelayMs: 300 });
    emulators.push(emulator);
    let killed = () => {};
    const accepted = new Promise<void>((resolve) => {
      killed = resolve;
    });
    const first = await startTestOperator({
      controllers: [fast],
      namespaces: [ns],
      emulator,
      shutdownTimeoutMs: 300,
      makeService: diesAfter("createTrainingTask", () => killed()),
    });
    started.push(first);
    await createJob(first.kube, ns, "crash", spec);
    await accepted;
    await first.stop();

    const orphaned = await getJob(first.kube, ns, "crash");
    expect(orphaned.metadata?.annotations?.[ANNOTATIONS.createPending]).toBeDefined();
    expect(orphaned.metadata?.annotations?.[ANNOTATIONS.subscriptionKey]).toBeUndefined();
    expect(await taskIdsNamed(first.admin, "crash")).toHaveLength(1);

    const second = await startTestOperator({ controllers: [fast], namespaces: [ns], emulator });
    started.push(second);
    const job = await waitForJob(second.kube, ns, "crash", running);
    expect(await taskIdsNamed(second.admin, "crash")).toEqual([job.status?.taskId]);
    expect(await createRequests(second.admin, "crash")).toHaveLength(1);
    expect(job.metadata?.annotations?.[ANNOTATIONS.externalId]).toBe(job.status?.taskId);
  }, 60_000);
});

describe("service faults", () => {
  it("converge to one running task per job with no duplicates", async () => {
    // A namespace of its own, apart from the job the test above leaves (each emulator
    // tags its ids, so the two emulators' task ids never meet either).
    const ns = await createNamespace(adminKubeConfig(), "tj-faults");
    const op = await startTestOperator({
      controllers: [fast],
      namespaces: [ns],
      emulatorOptions: {
        randomSeed: 7,
        faults: [
          // A failed create acts first (a create that did nothing and failed is never
          // sent again: the job would stop with CreateOutcomeUnknown).
          { kind: "drop", endpoint: "createTrainingTask", rate: 0.3, acting: true },
          { kind: "error", endpoint: "createTrainingTask", rate: 0.3, acting: true },
          { kind: "error", rate: 0.2, exceptEndpoints: ["createTrainingTask"] },
          { kind: "malformed", endpoint: "getTrainingTask", rate: 0.1 },
        ],
      },
    });
    started.push(op);
    const names = ["faulty-a", "faulty-b", "faulty-c"];
    for (const name of names) await createJob(op.kube, ns, name, spec);
    const jobs = await Promise.all(
      names.map((name) => waitForJob(op.kube, ns, name, running, 60_000)),
    );
    const faults = await op.admin.requests({ endpoint: "createTrainingTask" });
    expect(faults.some((e) => e.fault)).toBe(true);
    for (const job of jobs) {
      const name = job.metadata?.name as string;
      expect(await taskIdsNamed(op.admin, name)).toEqual([job.status?.taskId]);
    }
    await op.admin.clearFaults();
    await eventually(async () => {
      const all = await Promise.all(names.map((n) => getJob(op.kube, ns, n)));
      return all.every((j) => conditionOf(j, "Synced")?.status === "True");
    });
  }, 90_000);
});
