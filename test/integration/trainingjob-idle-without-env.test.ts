/**
 * A settled TrainingJob on a task list without env (the emulator's `listsOmitEnv`) is
 * answered from the list as on one with env: the listed task gets the env of its last
 * detail read, kept by the service layer for the account (src/service/list-details.ts),
 * so over an idle window the operator reads nothing of the task's own, and the status
 * keeps the env names and owner that only the env carries.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ControllerFactory } from "../../src/controllers/index.js";
import { trainingJobController } from "../../src/controllers/trainingjob/controller.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";
import { createJob, getJob, settledRunning, waitForJob } from "../support/trainingjobs.js";

/** The operator's poll interval. */
const POLL_MS = 1_000;
/** The idle window measured, after the job settled. */
const WINDOW_MS = 6_000;

const controllerFor: ControllerFactory = (deps) =>
  trainingJobController(deps, { subscriptionPollMs: 200 });

let op: TestOperator;
let ns: string;
let taskId: string;

beforeAll(async () => {
  ns = await createNamespace(adminKubeConfig(), "tj-idle-noenv");
  op = await startTestOperator({
    controllers: [controllerFor],
    namespaces: [ns],
    pollIntervalMs: POLL_MS,
    emulatorOptions: { listsOmitEnv: true },
  });
  await createJob(op.kube, ns, "job", {
    image: "registry.example.com/ml/train:1",
    productCode: "train.cpu.16",
    workerCount: 1,
    env: { EPOCHS: "3" },
  });
  const job = await waitForJob(op.kube, ns, "job", settledRunning, 60_000);
  taskId = job.status?.taskId as string;
  // Two more polls: the routine poll that reads the task in detail once is behind us.
  await new Promise((r) => setTimeout(r, 2 * POLL_MS + 500));
}, 120_000);

afterAll(async () => {
  await op?.stop();
});

describe("an idle Running TrainingJob on a task list without env", () => {
  it("is answered from the list with its task's kept env: no read of the task's own", async () => {
    const own = async () =>
      (await op.admin.requests()).filter((r) => r.path.includes(taskId)).length;
    const before = await own();
    const shown = (await getJob(op.kube, ns, "job")).status;
    await new Promise((r) => setTimeout(r, WINDOW_MS));
    expect((await own()) - before).toBe(0);
    const after = (await getJob(op.kube, ns, "job")).status;
    expect(after?.config?.envKeys).toEqual(shown?.config?.envKeys);
    expect(after?.config?.envKeys).toContain("EPOCHS");
  }, 30_000);
});
