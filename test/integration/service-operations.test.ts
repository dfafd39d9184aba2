/**
 * Orders that could never finish are not placed (issue 15, item 2): against an
 * emulator that lacks an assumed operation (a bare 404 on its path), no order is sent
 * and the condition names the operation and its config key; when the path comes back
 * the object proceeds by itself. A missing pod list only leaves pods out of status.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { trainingJobController } from "../../src/controllers/trainingjob/controller.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";
import { createJob, createRequests, waitForJob } from "../support/trainingjobs.js";

const IMAGE = "registry.example.com/ml/train:1";
const JOB = { image: IMAGE, productCode: "train.cpu.16", workerCount: 1 };

let op: TestOperator;
let ns: string;

beforeAll(async () => {
  ns = await createNamespace(adminKubeConfig(), "svc-ops");
  op = await startTestOperator({
    controllers: [
      nasVolumeController,
      (deps) => trainingJobController(deps, { subscriptionPollMs: 200 }),
    ],
    namespaces: [ns],
    config: { holdBackoff: { baseMs: 1_000, maxMs: 2_000 } },
    service: { recheckMissingMs: 500 },
  });
}, 60_000);

afterAll(async () => {
  await op?.stop();
});

describe("an assumed operation the service does not answer", () => {
  it("places no NAS order while the subscription-result query is missing, and orders once it is back", async () => {
    await op.admin.configure({ missingOperations: ["getNasSubscriptionResult"] });
    const nas = new ObjectsOf(op.kube, nasVolumeCrd, ns);
    try {
      await nas.create("no-result", { productCode: "nas.capacity.standard", capacityGB: 100 });
      const held = await nas.waitForCondition(
        "no-result",
        "Ready",
        "False",
        "OperationMissingTerminal",
      );
      const message = conditionOf(held, "Ready")?.message ?? "";
      expect(message).toContain("getNasSubscriptionResult");
      expect(message).toContain("service.endpoints.getNasSubscriptionResult");
      expect(conditionOf(held, "Synced")?.reason).toBe("OperationMissingTerminal");
      expect(await op.admin.requests({ endpoint: "subscribeNas" })).toEqual([]);
      expect(held.metadata?.finalizers ?? []).toEqual([]);
      expect(op.service.operations.verdict("getNasSubscriptionResult")).toBe("missing");
    } finally {
      await op.admin.configure({ missingOperations: [] });
    }
    const back = Date.now();
    await nas.waitForCondition("no-result", "Ready", "True", undefined, 15_000);
    // Within the hold backoff (2 s) and the recheck of the verdict, without a restart.
    expect(Date.now() - back).toBeLessThan(10_000);
    expect((await op.admin.requests({ endpoint: "subscribeNas" })).length).toBe(1);
  });

  it("places no task order while the task list is missing, naming it and its config key", async () => {
    await op.admin.configure({ missingOperations: ["listTrainingTasks"] });
    try {
      await createJob(op.kube, ns, "no-list", { taskName: "no-list-task", ...JOB });
      const held = await waitForJob(
        op.kube,
        ns,
        "no-list",
        (j) =>
          j.status?.conditions?.some(
            (c) => c.type === "Synced" && c.reason === "OperationMissingTerminal",
          ) ?? false,
      );
      const ready = held.status?.conditions?.find((c) => c.type === "Ready");
      expect(ready).toMatchObject({ status: "False", reason: "OperationMissingTerminal" });
      expect(ready?.message).toContain("service.endpoints.listTrainingTasks");
      expect(await createRequests(op.admin, "no-list-task")).toEqual([]);
    } finally {
      await op.admin.configure({ missingOperations: [] });
    }
  });

  it("observes a task without a pod list: Ready, pods left out, a PodsObserved note naming the key", async () => {
    await op.admin.configure({ missingOperations: ["listPods"] });
    try {
      await createJob(op.kube, ns, "no-pods", { taskName: "no-pods-task", ...JOB });
      const job = await waitForJob(
        op.kube,
        ns,
        "no-pods",
        (j) =>
          j.status?.phase === "Running" &&
          j.status?.conditions?.some(
            (c) => c.type === "PodsObserved" && c.reason === "PodOperationMissing",
          ) === true,
      );
      expect(job.status?.conditions?.find((c) => c.type === "Ready")?.status).toBe("True");
      expect(job.status?.conditions?.find((c) => c.type === "Synced")?.status).toBe("True");
      expect(job.status?.pods).toBeUndefined();
      expect(job.status?.conditions?.find((c) => c.type === "PodsObserved")).toMatchObject({
        status: "False",
        reason: "PodOperationMissing",
        message: expect.stringContaining("service.endpoints.listPods"),
      });
    } finally {
      await op.admin.configure({ missingOperations: [] });
    }
    // The pod list back: pods in status, the note gone.
    const full = await waitForJob(
      op.kube,
      ns,
      "no-pods",
      (j) =>
        (j.status?.pods?.length ?? 0) > 0 &&
        !j.status?.conditions?.some((c) => c.type === "PodsObserved"),
    );
    expect(full.status?.taskId).toBeTruthy();
  });
});
