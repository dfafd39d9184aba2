/**
 * A running TrainingJob's updates against the real API server and the emulator: a
 * description change sends only PUT desc; spec.ports opens and closes custom ports;
 * exposePorts keeps a Service and EndpointSlice per open port that follow port
 * changes; spec.exportTo's ConfigMap follows the ports; a failed task's message
 * surfaces in the Ready condition.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ControllerFactory } from "../../src/controllers/index.js";
import { CONFIG_MAPS } from "../../src/controllers/managed/export.js";
import { trainingJobController } from "../../src/controllers/trainingjob/controller.js";
import { ENDPOINT_SLICES, JOB_LABEL, SERVICES } from "../../src/controllers/trainingjob/expose.js";
import { trainingJobExposureController } from "../../src/controllers/trainingjob/exposure-controller.js";
import { trainingJobCrd } from "../../src/crds/trainingjob.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { EVENTS } from "../support/managed.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";
import { conditionOf, createJob, patchSpec, waitForJob } from "../support/trainingjobs.js";

const fast: ControllerFactory = (deps) => trainingJobController(deps, { subscriptionPollMs: 200 });

/** Exposure on over `cidrs`; the emulator's external addresses (EXTERNAL_HOST) are in 203.0.113.0/24. */
const exposureOn = (cidrs: string[]) => ({
  trainingJob: { exposure: { enabled: true, allowedCidrs: cidrs } },
});

const IMAGE = "registry.example.com/ml/train:1";

let op: TestOperator;
let ns: string;

beforeAll(async () => {
  ns = await createNamespace(adminKubeConfig(), "tj-upd");
  op = await startTestOperator({
    controllers: [fast, trainingJobExposureController],
    namespaces: [ns],
    config: exposureOn(["203.0.113.0/24"]),
  });
}, 60_000);

afterAll(async () => {
  await op?.stop();
});

const running = (j: { status?: { taskId?: string; phase?: string } }) =>
  Boolean(j.status?.taskId) && j.status?.phase === "Running";

async function startJob(name: string, extra: Record<string, unknown> = {}) {
  await createJob(op.kube, ns, name, {
    image: IMAGE,
    productCode: "train.cpu.16",
    workerCount: 2,
    ...extra,
  });
  return waitForJob(op.kube, ns, name, running);
}

async function lastSeq(): Promise<number> {
  return (await op.admin.requests()).at(-1)?.seq ?? 0;
}

/** Service-changing requests (everything but reads) to the task since `seq`. */
async function writesSince(seq: number, taskId: string) {
  const entries = await op.admin.requests({ since: seq });
  return entries.filter((e) => e.method !== "GET" && e.path.includes(taskId));
}

describe("description", () => {
  it("sends only PUT desc when the description changes", async () => {
    const job = await startJob("desc", { description: "before" });
    const taskId = job.status?.taskId as string;
    const since = await lastSeq();
    await patchSpec(op.kube, ns, "desc", { description: "after" });
    await eventually(async () => {
      const t = (await op.admin.state()).tasks.find((x) => x.id === taskId);
      return t?.desc === "after";
    });
    const writes = await writesSince(since, taskId);
    expect(writes.map((w) => [w.method, w.endpoint, w.body])).toEqual([
      ["PUT", "updateTrainingTaskDesc", { desc: "after" }],
    ]);
    const all = await op.admin.requests({ since });
    expect(all.filter((e) => e.endpoint === "createTrainingTask")).toHaveLength(0);
    await waitForJob(op.kube, ns, "desc", (j) => conditionOf(j, "Synced")?.status === "True");
  }, 60_000);
});

function customPorts(job: {
  status?: { pods?: { ports?: { port: number; custom: boolean }[] }[] };
}) {
  return (job.status?.pods ?? []).map((p) =>
    (p.ports ?? []).filter((x) => x.custom).map((x) => x.port),
  );
}

async function exposure(name: string): Promise<{ services: KubeObject[]; slices: KubeObject[] }> {
  const labelSelector = `${JOB_LABEL}=${name}`;
  const [s, e] = await Promise.all([
    op.kube.list(SERVICES, ns, { labelSelector }),
    op.kube.list(ENDPOINT_SLICES, ns, { labelSelector }),
  ]);
  return { services: s.items, slices: e.items };
}

describe("ports and exposure", () => {
  it("opens, closes and exposes custom ports, and the Services follow the changes", async () => {
    const job = await startJob("ports", { ports: [{ port: 8888 }], exposePorts: true });
    const taskId = job.status?.taskId as string;
    const opened = await waitForJob(
      op.kube,
      ns,
      "ports",
      (j) => customPorts(j).every((p) => p.join() === "8888") && customPorts(j).length === 2,
    );
    const opens = (await op.admin.requests({ endpoint: "openPodPort" })).filter((e) =>
      e.path.includes(taskId),
    );
    expect(opens.map((e) => e.body)).toEqual([
      { port: 8888, protocol: "http" },
      { port: 8888, protocol: "http" },
    ]);
    const port = opened.status?.pods?.[0]?.ports?.find((p) => p.custom);
    expect(port).toMatchObject({ externalHost: "203.0.113.10", serviceName: expect.any(String) });

    const exposed = await eventually(async () => {
      const e = await exposure("ports");
      return e.services.length === 2 && e.slices.length === 2 ? e : undefined;
    });
    const svc = exposed.services.find((s) => s.metadata?.name === port?.serviceName);
    expect(svc?.spec).toMatchObject({
      ports: [{ name: "http", port: 8888, targetPort: port?.externalPort, protocol: "TCP" }],
    });
    expect(svc?.spec).not.toHaveProperty("selector");
    expect(svc?.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: "TrainingJob", name: "ports", uid: job.metadata?.uid }),
    ]);
    const slice = exposed.slices.find((s) => s.metadata?.name === port?.serviceName);
    expect(slice?.metadata?.labels?.["kubernetes.io/service-name"]).toBe(port?.serviceName);
    expect(slice).toMatchObject({
      addressType: "IPv4",
      endpoints: [expect.objectContaining({ addresses: ["203.0.113.10"] })],
      ports: [{ name: "http", port: port?.externalPort, protocol: "TCP" }],
    });

    const since = await lastSeq();
    await patchSpec(op.kube, ns, "ports", { ports: [{ port: 9000, protocol: "https" }] });
    await waitForJob(
      op.kube,
      ns,
      "ports",
      (j) => customPorts(j).every((p) => p.join() === "9000") && customPorts(j).length === 2,
    );
    const writes = await writesSince(since, taskId);
    expect(writes.filter((w) => w.endpoint === "closePodPort").map((w) => w.body)).toEqual([
      { port: 8888 },
      { port: 8888 },
    ]);
    expect(writes.filter((w) => w.endpoint === "openPodPort").map((w) => w.body)).toEqual([
      { port: 9000, protocol: "https" },
      { port: 9000, protocol: "https" },
    ]);
    const followed = await eventually(async () => {
      const e = await exposure("ports");
      const names = e.services.map((s) => s.metadata?.name ?? "");
      return names.length === 2 && names.every((n) => n.endsWith("-9000")) && e.slices.length === 2
        ? e
        : undefined;
    });
    expect(followed.slices.every((s) => s.metadata?.name?.endsWith("-9000"))).toBe(true);

    await patchSpec(op.kube, ns, "ports", { ports: [] });
    await eventually(async () => {
      const e = await exposure("ports");
      return e.services.length === 0 && e.slices.length === 0;
    });
  }, 90_000);
});

describe("spec.exportTo", () => {
  it("writes the task id and each pod's external addresses into spec.exportTo's ConfigMap, following port changes", async () => {
    const job = await startJob("exported", {
      ports: [{ port: 8888 }],
      exportTo: { configMapName: "exported-conn" },
    });
    type ConfigMap = KubeObject & { data?: Record<string, string> };
    const data = (keyPresent: string) =>
      eventually(async () => {
        const cm = await op.kube.get<ConfigMap>(CONFIG_MAPS, {
          namespace: ns,
          name: "exported-conn",
        });
        return cm?.data?.[keyPresent] ? cm : undefined;
      });
    const first = await data("POD_1_PORT_8888");
    const pods = (await waitForJob(op.kube, ns, "exported", (j) => customPorts(j).length === 2))
      .status?.pods;
    const sorted = [...(pods ?? [])].sort((a, b) => a.name.localeCompare(b.name));
    const address = (i: number, port: number) => {
      const p = sorted[i]?.ports?.find((x) => x.port === port);
      return `${p?.externalHost}:${p?.externalPort}`;
    };
    expect(first.data).toMatchObject({
      TASK_ID: job.status?.taskId,
      POD_0_NAME: sorted[0]?.name,
      POD_1_NAME: sorted[1]?.name,
      POD_0_PORT_8888: address(0, 8888),
      POD_1_PORT_8888: address(1, 8888),
    });
    expect(first.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: "TrainingJob", uid: job.metadata?.uid, controller: true }),
    ]);

    await patchSpec(op.kube, ns, "exported", { ports: [{ port: 9000 }] });
    const moved = await data("POD_1_PORT_9000");
    expect(Object.keys(moved.data ?? {}).filter((k) => k.endsWith("_8888"))).toEqual([]);
  });
});

describe("an exposure Service deleted by hand", () => {
  it("is made again by the exposure controller, which watches the objects it owns", async () => {
    await startJob("byhand", { ports: [{ port: 7000 }], exposePorts: true });
    const before = await eventually(async () => {
      const e = await exposure("byhand");
      return e.services.length === 2 && e.slices.length === 2 ? e : undefined;
    });
    const victim = before.services[0] as KubeObject;
    const name = victim.metadata?.name ?? "";
    await op.kube.delete(SERVICES, { namespace: ns, name });
    const again = await eventually(async () => {
      const e = await exposure("byhand");
      const s = e.services.find((x) => x.metadata?.name === name);
      return s && s.metadata?.uid !== victim.metadata?.uid ? s : undefined;
    }, 20_000);
    expect(again.spec).toMatchObject({ ports: [expect.objectContaining({ port: 7000 })] });
    expect(again.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: "TrainingJob", name: "byhand", controller: true }),
    ]);
  }, 60_000);
});

describe("exposure disabled (the default)", () => {
  it("opens the ports but makes no Service, and says which setting enables it", async () => {
    const other = await createNamespace(adminKubeConfig(), "tj-noexp");
    const plain = await startTestOperator({
      controllers: [fast],
      namespaces: [other],
    });
    try {
      await createJob(plain.kube, other, "noexp", {
        image: IMAGE,
        productCode: "train.cpu.16",
        workerCount: 2,
        ports: [{ port: 8888 }],
        exposePorts: true,
      });
      const refused = await waitForJob(
        plain.kube,
        other,
        "noexp",
        (j) => conditionOf(j, "Synced")?.reason === "ExposureDisabled",
      );
      expect(conditionOf(refused, "Synced")?.message).toContain("trainingJob.exposure.enabled");
      expect(conditionOf(refused, "Ready")?.status).toBe("True");
      const opened = await waitForJob(
        plain.kube,
        other,
        "noexp",
        (j) => customPorts(j).length === 2 && customPorts(j).every((p) => p.join() === "8888"),
      );
      for (const pod of opened.status?.pods ?? []) {
        for (const p of pod.ports ?? []) expect(p).not.toHaveProperty("serviceName");
      }
      const labelSelector = `${JOB_LABEL}=noexp`;
      expect((await plain.kube.list(SERVICES, other, { labelSelector })).items).toEqual([]);
      expect((await plain.kube.list(ENDPOINT_SLICES, other, { labelSelector })).items).toEqual([]);
    } finally {
      await plain.stop();
    }
  }, 60_000);
});

describe("exposure of an address outside the allowed ranges", () => {
  it("opens the ports but makes no Service or EndpointSlice, and names the setting", async () => {
    const other = await createNamespace(adminKubeConfig(), "tj-cidr");
    const narrow = await startTestOperator({
      controllers: [fast, trainingJobExposureController],
      namespaces: [other],
      // Not the emulator's 203.0.113.10: as if the service pointed elsewhere.
      config: exposureOn(["198.51.100.0/24"]),
    });
    try {
      await createJob(narrow.kube, other, "outside", {
        image: IMAGE,
        productCode: "train.cpu.16",
        workerCount: 1,
        ports: [{ port: 8888 }],
        exposePorts: true,
      });
      const refused = await waitForJob(
        narrow.kube,
        other,
        "outside",
        (j) => conditionOf(j, "Synced")?.reason === "ExposureAddressRefused",
      );
      expect(conditionOf(refused, "Synced")?.message).toContain(
        "trainingJob.exposure.allowedCidrs",
      );
      expect(conditionOf(refused, "Synced")?.message).toContain('at "203.0.113.10"');
      const labelSelector = `${JOB_LABEL}=outside`;
      expect((await narrow.kube.list(SERVICES, other, { labelSelector })).items).toEqual([]);
      expect((await narrow.kube.list(ENDPOINT_SLICES, other, { labelSelector })).items).toEqual([]);
    } finally {
      await narrow.stop();
    }
  }, 60_000);
});

describe("a failed task", () => {
  it("shows the service's message in a terminal Ready condition, the Failed phase and one Warning Event", async () => {
    const job = await startJob("fails");
    await op.admin.setTaskState(job.status?.taskId as string, {
      status: "FAILED",
      info: "OOMKilled in worker-0",
    });
    const failed = await waitForJob(op.kube, ns, "fails", (j) => j.status?.phase === "Failed");
    expect(conditionOf(failed, "Ready")).toMatchObject({
      status: "False",
      reason: "TaskFailed",
      message: "the task is FAILED: OOMKilled in worker-0",
    });
    expect(failed.status?.execInfos?.at(-1)).toMatchObject({
      status: "FAILED",
      info: "OOMKilled in worker-0",
    });
    // A Warning says so where people watch (kubectl get events), once: the polls that
    // find the task failed again add nothing.
    const warnings = async () =>
      (await op.kube.list<KubeObject>(EVENTS, ns)).items.filter(
        (e) =>
          (e.regarding as { name?: string } | undefined)?.name === "fails" &&
          e.type === "Warning" &&
          e.reason === "TaskFailed",
      );
    const [warning] = await eventually(async () =>
      (await warnings()).length ? warnings() : undefined,
    );
    expect(warning?.note).toBe("the task is FAILED: OOMKilled in worker-0");
    await new Promise((r) => setTimeout(r, 2_000));
    const after = await warnings();
    expect(after).toHaveLength(1);
    expect((after[0]?.series as { count?: number } | undefined)?.count ?? 1).toBe(1);
  }, 60_000);
});

describe("deletion", () => {
  it("orphans the task by default and releases the object", async () => {
    const job = await startJob("orphaned");
    await op.kube.delete(trainingJobCrd, { namespace: ns, name: "orphaned" });
    await eventually(async () => {
      const gone = await op.kube.get(trainingJobCrd, { namespace: ns, name: "orphaned" });
      return gone === undefined;
    });
    const task = (await op.admin.state()).tasks.find((t) => t.id === job.status?.taskId);
    expect(task?.status).toBe("RUNNING");
  }, 60_000);
});

describe("an open-port the service did not answer", () => {
  it("opens the ports once the service answers it again, without a restart: OpenPortRefused goes", async () => {
    const other = await createNamespace(adminKubeConfig(), "tj-noopen");
    const plain = await startTestOperator({
      controllers: [fast],
      namespaces: [other],
      service: { recheckMissingMs: 1_000 },
    });
    try {
      await plain.admin.configure({ missingOperations: ["openPodPort"] });
      await createJob(plain.kube, other, "noopen", {
        image: IMAGE,
        productCode: "train.cpu.16",
        workerCount: 1,
        ports: [{ port: 8888 }],
      });
      const refused = await waitForJob(
        plain.kube,
        other,
        "noopen",
        (j) => conditionOf(j, "Synced")?.reason === "OpenPortRefused",
      );
      expect(conditionOf(refused, "Ready")?.status).toBe("True");
      // A gateway's passing 404 (a deploy): the service answers the operation again.
      await plain.admin.configure({ missingOperations: [] });
      const opened = await waitForJob(
        plain.kube,
        other,
        "noopen",
        (j) => conditionOf(j, "Synced")?.status === "True" && customPorts(j)[0]?.length === 1,
        15_000,
      );
      expect(customPorts(opened)[0]?.join()).toBe("8888");
    } finally {
      await plain.stop();
    }
  }, 60_000);
});
