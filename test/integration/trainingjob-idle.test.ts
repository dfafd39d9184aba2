/**
 * A settled Running TrainingJob is quiet: over an idle window its operator makes no
 * Kubernetes write and emits no Event, and a job with `exposePorts: true` costs as
 * many service calls, and as many Kubernetes reads, as one without exposure. Each job has an operator of its own
 * (one namespace each, one shared emulator), so that the operator's own metrics count
 * one job's reconciles and writes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ControllerFactory } from "../../src/controllers/index.js";
import { trainingJobController } from "../../src/controllers/trainingjob/controller.js";
import { ENDPOINT_SLICES, JOB_LABEL, SERVICES } from "../../src/controllers/trainingjob/expose.js";
import { trainingJobExposureController } from "../../src/controllers/trainingjob/exposure-controller.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { EVENTS } from "../support/managed.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";
import { samples } from "../support/prometheus.js";
import { createJob, settledRunning, waitForJob } from "../support/trainingjobs.js";

/** The poll interval of both operators. */
const POLL_MS = 1_000;
/** The idle window measured, after the jobs settled. */
const WINDOW_MS = 8_000;

const controllerFor: ControllerFactory = (deps) =>
  trainingJobController(deps, { subscriptionPollMs: 200 });

/** Exposure on, over the documentation range of the emulator's external addresses (EXTERNAL_HOST). */
const EXPOSURE = { trainingJob: { exposure: { enabled: true, allowedCidrs: ["203.0.113.0/24"] } } };

interface Side {
  op: TestOperator;
  ns: string;
  taskId: string;
}

let exposed: Side;
let plain: Side;

async function start(prefix: string, exposePorts: boolean, shared?: TestOperator): Promise<Side> {
  const ns = await createNamespace(adminKubeConfig(), prefix);
  const op = await startTestOperator({
    controllers: [controllerFor, trainingJobExposureController],
    namespaces: [ns],
    pollIntervalMs: POLL_MS,
    config: EXPOSURE,
    ...(shared ? { emulator: shared.emulator } : {}),
  });
  await createJob(op.kube, ns, "job", {
    image: "registry.example.com/ml/train:1",
    productCode: "train.cpu.16",
    workerCount: 2,
    ports: [{ port: 8888 }, { port: 6006 }],
    exposePorts,
  });
  const job = await waitForJob(
    op.kube,
    ns,
    "job",
    (j) =>
      settledRunning(j) &&
      (j.status?.pods ?? []).every((p) => (p.ports ?? []).filter((x) => x.custom).length === 2),
    60_000,
  );
  return { op, ns, taskId: job.status?.taskId as string };
}

/** What one side did: from its operator's metrics, its namespace's Events, the emulator. */
async function figures(side: Side) {
  const text = await side.op.manager.metrics.text();
  const sum = (name: string, keep: (l: Record<string, string>) => boolean) =>
    samples(text, name)
      .filter((s) => keep(s.labels))
      .reduce((n, s) => n + s.value, 0);
  const { items: events } = await side.op.kube.list<KubeObject>(EVENTS, side.ns);
  const calls = (await side.op.admin.requests()).filter((r) => r.path.includes(side.taskId));
  return {
    reconciles: sum("controller_runtime_reconcile_total", () => true),
    writes: sum("rest_client_requests_total", (l) => l.method !== "GET"),
    reads: sum("rest_client_requests_total", (l) => l.method === "GET"),
    events: events.reduce((n, e) => n + Number((e.series as { count?: number })?.count ?? 1), 0),
    serviceCalls: calls.length,
  };
}

const delta = (a: Awaited<ReturnType<typeof figures>>, b: typeof a) => ({
  reconciles: b.reconciles - a.reconciles,
  writes: b.writes - a.writes,
  reads: b.reads - a.reads,
  events: b.events - a.events,
  serviceCalls: b.serviceCalls - a.serviceCalls,
});

beforeAll(async () => {
  exposed = await start("tj-idle-exp", true);
  plain = await start("tj-idle-plain", false, exposed.op);
  // Every Service and EndpointSlice exists before the window starts.
  await eventually(async () => {
    const labelSelector = `${JOB_LABEL}=job`;
    const [s, e] = await Promise.all([
      exposed.op.kube.list(SERVICES, exposed.ns, { labelSelector }),
      exposed.op.kube.list(ENDPOINT_SLICES, exposed.ns, { labelSelector }),
    ]);
    return s.items.length === 4 && e.items.length === 4 ? true : undefined;
  }, 30_000);
  // Two more polls: the last writes of coming up (status, events) are behind us.
  await new Promise((r) => setTimeout(r, 2 * POLL_MS + 500));
}, 150_000);

afterAll(async () => {
  await plain?.op.stop();
  await exposed?.op.stop();
});

describe("an idle Running TrainingJob", () => {
  it("with exposed ports makes no Kubernetes write and no Event, and as many service calls as one without", async () => {
    const before = await Promise.all([figures(exposed), figures(plain)]);
    await new Promise((r) => setTimeout(r, WINDOW_MS));
    const after = await Promise.all([figures(exposed), figures(plain)]);
    const e = delta(before[0], after[0]);
    const p = delta(before[1], after[1]);
    expect(e.writes).toBe(0);
    expect(e.events).toBe(0);
    expect(p.writes).toBe(0);
    expect(p.events).toBe(0);
    // The exposure objects are read from the informer cache, not listed every poll.
    expect(e.reads).toBeLessThanOrEqual(p.reads);
    // Routine polls only: about one reconcile per poll, like the plain job.
    expect(e.reconciles).toBeLessThanOrEqual(p.reconciles + 2);
    // The same polls cost the same service calls (within one poll's worth of timing).
    const perPoll = p.serviceCalls / Math.max(1, p.reconciles);
    expect(Math.abs(e.serviceCalls - p.serviceCalls)).toBeLessThanOrEqual(perPoll + 1);
    // Settled jobs are answered from the task list: no read of their own (task, storages,
    // pods, ports) within the hour between detail reads, whatever the number of polls.
    expect(e.serviceCalls).toBe(0);
    expect(p.serviceCalls).toBe(0);
    expect(p.reconciles).toBeGreaterThanOrEqual(WINDOW_MS / POLL_MS - 2);
  }, 60_000);

  it("costs one walk of the task list per poll interval for its operator, not reads per job", async () => {
    const before = (await plain.op.admin.requests()).length;
    const t0 = Date.now();
    await new Promise((r) => setTimeout(r, 4 * POLL_MS));
    const calls = (await plain.op.admin.requests()).slice(before);
    const polls = (Date.now() - t0) / POLL_MS;
    const byEndpoint = new Map<string, number>();
    for (const c of calls)
      byEndpoint.set(c.endpoint ?? "", (byEndpoint.get(c.endpoint ?? "") ?? 0) + 1);
    // Two operators (one per job), each walking the one-page task list once per poll.
    expect([...byEndpoint.keys()]).toEqual(["listTrainingTasks"]);
    expect(byEndpoint.get("listTrainingTasks")).toBeLessThanOrEqual(2 * (polls + 1));
  }, 30_000);

  it("shows a remote change within one poll interval (here a container restart, seen from the task's update time)", async () => {
    const restarted = (j: Awaited<ReturnType<typeof waitForJob>>) =>
      (j.status?.pods ?? []).some((p) => (p.containers ?? []).some((c) => c.restartCount === 3));
    const t0 = Date.now();
    await plain.op.admin.setTaskState(plain.taskId, { restartCount: 3 });
    await waitForJob(plain.op.kube, plain.ns, "job", restarted, 10_000);
    // One poll interval, plus the walk, the detail reads and the status write.
    expect(Date.now() - t0).toBeLessThan(POLL_MS + 1_500);
  }, 30_000);
});
