/**
 * The call budget at idle (issue 32): routine observation of a connection uses at most
 * `service.routineCallShare` of its rate limit, its intervals stretch to fit, the metric
 * says so, and a create made meanwhile goes first.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { EmulatorAdmin } from "../../src/emulator/admin-client.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import { KubeClient } from "../../src/runtime/kube.js";
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
