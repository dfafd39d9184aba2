/**
 * The call budget at idle (issue 32): routine observation of a connection uses at most
 * `service.routineCallShare` of its rate limit, its intervals stretch to fit, the metric
 * says so, and a create made meanwhile goes first. Routine means observation of a
 * settled object: a TrainingJob's follow-up reads right after Ready (its pods) are not
 * held by the budget, while the settled fleet's polls are.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { trainingJobController } from "../../src/controllers/trainingjob/controller.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { trainingJobCrd } from "../../src/crds/trainingjob.js";
import { EmulatorAdmin } from "../../src/emulator/admin-client.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import { KubeClient } from "../../src/runtime/kube.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { installCrds } from "../support/crds.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { ObjectsOf } from "../support/managed.js";
import { TEST_API_KEY } from "../support/operator.js";
import { type OperatorInProcess, runInProcessWith } from "../support/run-operator.js";

const NAS_SPEC = { productCode: "nas.capacity.standard", capacityGB: 100 };
/** The connection's limit, and the share routine observation may use: 2 calls/s. */
const RATE = { ratePerSecond: 10, burst: 10 };
const SHARE = 0.2;

describe("the call budget at idle", () => {
  const kc = adminKubeConfig();
  let emulator: RunningEmulator;
  let namespace = "";
  let op: OperatorInProcess;

  beforeAll(async () => {
    await installCrds(kc);
    namespace = await createNamespace(kc, "routine-budget");
    emulator = await startEmulator({ apiKey: TEST_API_KEY, subscriptionDelayMs: 100 });
    const config = {
      service: {
        baseUrl: emulator.url,
        allowInsecureHttp: true,
        rateLimit: RATE,
        routineCallShare: SHARE,
      },
      watchNamespaces: [namespace],
      // Far more routine observation than the budget allows: 30 objects every 300 ms.
      pollIntervalMs: { default: 300 },
      server: { port: 0, host: "127.0.0.1" },
      log: { level: "silent" },
    };
    op = await runInProcessWith(config, {
      controllerFactories: [nasVolumeController],
      env: { AIDC_API_KEY: TEST_API_KEY },
    });
  });
  afterAll(async () => {
    if (op) expect(await op.stop()).toBe(0);
    await emulator?.stop();
  });

  it("keeps routine calls within their share, says it stretched them, and lets a create go first", async () => {
    const nas = new ObjectsOf(new KubeClient(kc), nasVolumeCrd, namespace);
    const names = Array.from({ length: 30 }, (_, i) => `idle-${i}`);
    for (const name of names) await nas.create(name, NAS_SPEC);
    for (const name of names) await nas.waitForCondition(name, "Ready", "True", undefined, 60_000);
    // Let the first looks after Ready pass; then watch the idle fleet for 6 s.
    await new Promise((r) => setTimeout(r, 3_000));
    const admin = new EmulatorAdmin(emulator.url);
    const since = (await admin.requests()).at(-1)?.seq ?? 0;
    const windowMs = 6_000;
    await new Promise((r) => setTimeout(r, windowMs));
    const calls = (await admin.requests({ since })).length;
    // 2 calls/s over the window, plus the routine burst (2).
    expect(calls).toBeLessThanOrEqual((RATE.ratePerSecond * SHARE * windowMs) / 1000 + 2);
    expect(calls).toBeGreaterThan(0);
    const waited =
      /aidc_service_routine_budget_wait_seconds_total\{connection="_default"\} ([\d.e+-]+)/.exec(
        await op.metrics(),
      );
    expect(Number(waited?.[1] ?? 0)).toBeGreaterThan(0);

    // A create during idle does not wait behind the stretched observation.
    const created = Date.now();
    await nas.create("fresh", NAS_SPEC);
    await nas.waitForCondition("fresh", "Ready", "True", undefined, 10_000);
    expect(Date.now() - created).toBeLessThan(4_000);
  });
});

/** aidc_service_routine_budget_wait_seconds_total of the default connection. */
async function routineBudgetWait(op: OperatorInProcess): Promise<number> {
  const waited =
    /aidc_service_routine_budget_wait_seconds_total\{connection="_default"\} ([\d.e+-]+)/.exec(
      await op.metrics(),
    );
  return Number(waited?.[1] ?? 0);
}

/** Ready=True, and whether some condition still says work is under way. */
function stateOf(obj: KubeObject): { ready: boolean; reconciling: boolean } {
  const conditions =
    (obj.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ??
    [];
  const is = (type: string) => conditions.some((c) => c.type === type && c.status === "True");
  return { ready: is("Ready"), reconciling: is("Reconciling") };
}

describe("the routine mark", () => {
  const kc = adminKubeConfig();
  let emulator: RunningEmulator;
  let namespace = "";
  let op: OperatorInProcess;
  /** 20 calls/s, of which routine observation may use 2/s. */
  const rate = { ratePerSecond: 20, burst: 20 };

  beforeAll(async () => {
    await installCrds(kc);
    namespace = await createNamespace(kc, "routine-mark");
    emulator = await startEmulator({ apiKey: TEST_API_KEY, subscriptionDelayMs: 0 });
    op = await runInProcessWith(
      {
        service: {
          baseUrl: emulator.url,
          allowInsecureHttp: true,
          rateLimit: rate,
          routineCallShare: 0.1,
        },
        watchNamespaces: [namespace],
        // The settled NAS fleet wants far more routine calls than the budget allows.
        pollIntervalMs: { default: 300 },
        server: { port: 0, host: "127.0.0.1" },
        log: { level: "silent" },
      },
      {
        controllerFactories: [nasVolumeController, trainingJobController],
        env: { AIDC_API_KEY: TEST_API_KEY },
      },
    );
  });
  afterAll(async () => {
    if (op) expect(await op.stop()).toBe(0);
    await emulator?.stop();
  });

  it("does not hold a TrainingJob's follow-up reads after Ready behind the routine budget that holds a settled fleet's polls", async () => {
    const kube = new KubeClient(kc);
    const nas = new ObjectsOf(kube, nasVolumeCrd, namespace);
    const fleet = Array.from({ length: 20 }, (_, i) => `idle-${i}`);
    for (const name of fleet) await nas.create(name, NAS_SPEC);
    for (const name of fleet) await nas.waitForCondition(name, "Ready", "True", undefined, 60_000);
    // Let the fleet settle into its routine polls, which the budget holds.
    await new Promise((r) => setTimeout(r, 3_000));
    const budgetWaitBefore = await routineBudgetWait(op);
    const jobs = new ObjectsOf(kube, trainingJobCrd, namespace);
    const names = Array.from({ length: 10 }, (_, i) => `job-${i}`);
    for (const name of names) {
      await jobs.create(name, {
        image: "registry.example.com/ml/train:1",
        productCode: "train.cpu.16",
        workerCount: 1,
      });
    }
    // Each job: Ready after its first look (the task alone), then a follow-up reads its
    // storages and pods (about five calls) while it is Reconciling.
    const readyAt = new Map<string, number>();
    const settledAt = new Map<string, number>();
    const deadline = Date.now() + 90_000;
    while (settledAt.size < names.length && Date.now() < deadline) {
      const { items } = await kube.list(trainingJobCrd, namespace);
      const now = Date.now();
      for (const job of items) {
        const name = job.metadata?.name ?? "";
        const { ready, reconciling } = stateOf(job);
        if (ready && !readyAt.has(name)) readyAt.set(name, now);
        if (ready && !reconciling && !settledAt.has(name)) settledAt.set(name, now);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(settledAt.size).toBe(names.length);
    const lastReady = Math.max(...readyAt.values());
    const lastSettled = Math.max(...settledAt.values());
    // About 50 follow-up calls: at the budget's 2/s they would take 25 s or more; as
    // work they share the 20/s with nothing but the budgeted polls.
    expect(lastSettled - lastReady).toBeLessThan(10_000);
    // Meanwhile the settled fleet's routine polls were held by the budget.
    expect(await routineBudgetWait(op)).toBeGreaterThan(budgetWaitBefore);
  });
});
