/**
 * Deletion as in a cluster: the local control plane runs kube-controller-manager's
 * garbage collector and namespace controller (src/controlplane/controller-manager.ts),
 * so a TrainingJob's exposure Services and EndpointSlices go with the job (their
 * ownerReference), and a deleted namespace takes its objects with it.
 */
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ControllerFactory } from "../../src/controllers/index.js";
import { NAS_FINALIZER } from "../../src/controllers/nasvolume/controller.js";
import { trainingJobController } from "../../src/controllers/trainingjob/controller.js";
import { ENDPOINT_SLICES, JOB_LABEL, SERVICES } from "../../src/controllers/trainingjob/expose.js";
import { trainingJobExposureController } from "../../src/controllers/trainingjob/exposure-controller.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { trainingJobCrd } from "../../src/crds/trainingjob.js";
import { KubeClient } from "../../src/runtime/kube.js";
import { installCrds } from "../support/crds.js";
import { adminKubeConfig, createNamespace, eventually, sweepNamespace } from "../support/kube.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";
import { createJob, waitForJob } from "../support/trainingjobs.js";

const exposing: ControllerFactory = (deps) =>
  trainingJobController(deps, { subscriptionPollMs: 200 });

/** Exposure on, over the documentation range of the emulator's external addresses (EXTERNAL_HOST). */
const EXPOSURE = { trainingJob: { exposure: { enabled: true, allowedCidrs: ["203.0.113.0/24"] } } };

/** How long the garbage collector may take: it discovers a new CRD within 30 s. */
const GC_TIMEOUT_MS = 60_000;

describe("deletion on the local control plane", () => {
  const kc = adminKubeConfig();
  const core = kc.makeApiClient(k8s.CoreV1Api);
  /** The test's own client: it outlives the operator, which the first test stops. */
  const kube = new KubeClient(kc);
  let op: TestOperator;
  let ns = "";

  beforeAll(async () => {
    ns = await createNamespace(kc, "deletion");
    op = await startTestOperator({
      controllers: [exposing, trainingJobExposureController],
      namespaces: [ns],
      config: EXPOSURE,
    });
  }, 60_000);

  afterAll(async () => {
    await op?.stop();
  });

  it("deleting a TrainingJob deletes its exposure Services and EndpointSlices (ownerReferences)", async () => {
    await createJob(op.kube, ns, "exposed", {
      image: "registry.example.com/ml/train:1",
      productCode: "train.cpu.16",
      workerCount: 2,
      ports: [{ port: 8888 }],
      exposePorts: true,
      deletionPolicy: "Orphan",
    });
    const job = await waitForJob(op.kube, ns, "exposed", (j) => j.status?.phase === "Running");
    const labelSelector = `${JOB_LABEL}=exposed`;
    const exposure = async () => {
      const [services, slices] = await Promise.all([
        kube.list(SERVICES, ns, { labelSelector }),
        kube.list(ENDPOINT_SLICES, ns, { labelSelector }),
      ]);
      return [...services.items, ...slices.items];
    };
    const owned = await eventually(async () => {
      const objects = await exposure();
      return objects.length === 4 ? objects : undefined;
    });
    for (const o of owned) {
      expect(o.metadata?.ownerReferences?.[0]).toMatchObject({ uid: job.metadata?.uid });
    }

    // The operator is stopped first, and the job's finalizer removed by hand: what
    // removes the objects is the garbage collector, not a last reconcile.
    await op.stop();
    await kube.patch(
      trainingJobCrd,
      { namespace: ns, name: "exposed" },
      {
        metadata: { finalizers: null },
      },
    );
    await kube.delete(trainingJobCrd, { namespace: ns, name: "exposed" });
    await eventually(async () => (await exposure()).length === 0, GC_TIMEOUT_MS, 500);
  }, 120_000);

  it("deleting a namespace deletes what it holds, custom resources included, then the namespace", async () => {
    await installCrds(kc);
    const doomed = await createNamespace(kc, "doomed");
    await core.createNamespacedConfigMap({
      namespace: doomed,
      body: { metadata: { name: "settings" }, data: { a: "1" } },
    });
    await createJob(kube, doomed, "left-behind", {
      image: "registry.example.com/ml/train:1",
      productCode: "train.cpu.16",
      workerCount: 1,
    });
    await core.deleteNamespace({ name: doomed });
    await eventually(
      async () => {
        try {
          await core.readNamespace({ name: doomed });
          return false;
        } catch (err) {
          return err instanceof k8s.ApiException && err.code === 404;
        }
      },
      GC_TIMEOUT_MS,
      500,
    );
    expect(
      await kube.get(trainingJobCrd, { namespace: doomed, name: "left-behind" }),
    ).toBeUndefined();
  }, 120_000);

  it("the sweep after each test file removes a left namespace's custom resources, finalizers and all", async () => {
    await installCrds(kc);
    const left = await createNamespace(kc, "left");
    await kube.create(nasVolumeCrd, {
      metadata: { namespace: left, name: "held", finalizers: [NAS_FINALIZER] },
      spec: { productCode: "nas.capacity.standard", capacityGB: 100 },
    });
    await createJob(kube, left, "plain", {
      image: "registry.example.com/ml/train:1",
      productCode: "train.cpu.16",
      workerCount: 1,
    });
    await sweepNamespace(kc, left);
    // At once, not when the namespace controller gets to it: the next file starts now.
    expect((await kube.list(nasVolumeCrd, left)).items).toEqual([]);
    expect((await kube.list(trainingJobCrd, left)).items).toEqual([]);
    expect((await core.readNamespace({ name: left })).status?.phase).toBe("Terminating");
  });
});
