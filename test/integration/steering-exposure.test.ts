/**
 * A paused TrainingJob's exposure (src/controllers/trainingjob/exposure-controller.ts),
 * on the real API server against the emulator: the Services and EndpointSlices of
 * spec.exposePorts are not changed while the job carries aidc.io/paused, as nothing
 * else of it is; resumed, the change is made.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ControllerFactory } from "../../src/controllers/index.js";
import { trainingJobController } from "../../src/controllers/trainingjob/controller.js";
import { ENDPOINT_SLICES, JOB_LABEL, SERVICES } from "../../src/controllers/trainingjob/expose.js";
import { trainingJobExposureController } from "../../src/controllers/trainingjob/exposure-controller.js";
import { trainingJobCrd } from "../../src/crds/trainingjob.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { ObjectsOf } from "../support/managed.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";
import { createJob, waitForJob } from "../support/trainingjobs.js";

const jobs: ControllerFactory = (deps) => trainingJobController(deps, { subscriptionPollMs: 200 });
/** Exposure on, over the documentation range of the emulator's external addresses. */
const EXPOSURE = { trainingJob: { exposure: { enabled: true, allowedCidrs: ["203.0.113.0/24"] } } };

let op: TestOperator;
let ns = "";

beforeAll(async () => {
  ns = await createNamespace(adminKubeConfig(), "steer-expose");
  op = await startTestOperator({
    controllers: [jobs, trainingJobExposureController],
    namespaces: [ns],
    pollIntervalMs: 500,
    config: EXPOSURE,
  });
}, 60_000);

afterAll(async () => {
  await op?.stop();
});

describe("a paused TrainingJob's exposure", () => {
  it("is left as it is when spec.exposePorts turns off, and removed once resumed", async () => {
    await createJob(op.kube, ns, "exposed", {
      image: "registry.example.com/ml/train:1",
      productCode: "train.cpu.16",
      workerCount: 2,
      ports: [{ port: 8888 }],
      exposePorts: true,
    });
    await waitForJob(op.kube, ns, "exposed", (j) => j.status?.phase === "Running");
    const labelSelector = `${JOB_LABEL}=exposed`;
    const exposure = async () => {
      const [services, slices] = await Promise.all([
        op.kube.list(SERVICES, ns, { labelSelector }),
        op.kube.list(ENDPOINT_SLICES, ns, { labelSelector }),
      ]);
      return services.items.length + slices.items.length;
    };
    await eventually(async () => (await exposure()) === 4);
    const job = new ObjectsOf(op.kube, trainingJobCrd, ns);
    await job.annotate("exposed", { "aidc.io/paused": "true" });
    await job.waitForCondition("exposed", "Synced", "False", "ReconcilePaused");
    await job.patchSpec("exposed", { exposePorts: false });
    await new Promise((r) => setTimeout(r, 2_000));
    expect(await exposure()).toBe(4);
    await job.annotate("exposed", { "aidc.io/paused": null });
    await eventually(async () => (await exposure()) === 0);
  });
});
