/**
 * A create whose answer was lost while the service still works on it, against a real
 * API server and the emulator (a latency fault holds the create at the service): the
 * operator looks its resource up and never creates it again until the create can no
 * longer take effect, however short the list visibility window. The window counts from
 * the end of the create call plus `service.timeoutMs` (an operator stopped mid-call, a
 * request timed out), not from the marker's time.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { ObjectsOf } from "../support/managed.js";
import { startTestOperator, TEST_API_KEY, type TestOperator } from "../support/operator.js";

const nasSpec = { productCode: "nas.capacity.standard", capacityGB: 100 };
const WINDOW_MS = 500;

let emulator: RunningEmulator;
const operators: TestOperator[] = [];

beforeAll(async () => {
  emulator = await startEmulator({ apiKey: TEST_API_KEY, subscriptionDelayMs: 300 });
});
afterEach(async () => {
  for (const op of operators.splice(0)) await op.stop();
  emulator.faults.clear();
});
afterAll(async () => {
  await emulator?.stop();
});

/** An operator on the shared emulator with a 500 ms window and `timeoutMs` per request. */
async function start(namespace: string, timeoutMs: number) {
  const op = await startTestOperator({
    controllers: [nasVolumeController],
    namespaces: [namespace],
    emulator,
    shutdownTimeoutMs: 300,
    service: { timeoutMs },
    config: {
      service: {
        baseUrl: emulator.url,
        allowInsecureHttp: true,
        timeoutMs,
        listVisibilityWindowMs: WINDOW_MS,
      },
    },
  });
  operators.push(op);
  return { op, nas: new ObjectsOf(op.kube, nasVolumeCrd, namespace) };
}

/** The NAS subscribes naming `name`, and the NAS of that name the service holds. */
function made(name: string) {
  const subscribes = emulator.requestLog
    .read({ endpoint: "subscribeNas" })
    .filter((e) => JSON.stringify(e.body).includes(`"name":"${name}"`));
  const nas = [...emulator.state.nas.values()].filter((n) => n.name === name);
  return { subscribes, nas };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Holds the next NAS subscribe `ms` at the service before it takes effect and answers;
 * `arrived` resolves when it reaches the service (its rule used up), `done` once it took
 * effect.
 */
function slowSubscribe(ms: number) {
  emulator.faults.set([{ kind: "latency", endpoint: "subscribeNas", latencyMs: ms, times: 1 }]);
  const arrived = (async () => {
    while (emulator.faults.list().length > 0) await sleep(20);
  })();
  return { arrived, done: arrived.then(() => sleep(ms + 300)) };
}

describe("a create still at the service when the list visibility window ends", () => {
  it("is adopted, not created again, when the operator stopped mid-call and another took over", async () => {
    const namespace = await createNamespace(adminKubeConfig(), "in-flight-stop");
    const held = slowSubscribe(4_000);
    const first = await start(namespace, 5_000);
    await first.nas.create("stopped", nasSpec);
    await held.arrived;
    // Stopped while the service works on the create: its answer never arrives.
    await first.op.stop();
    const { nas } = await start(namespace, 5_000);
    await nas.waitForCondition("stopped", "Ready", "True", "Available", 30_000);
    await held.done;
    expect(made("stopped").nas).toHaveLength(1);
    expect(made("stopped").subscribes).toHaveLength(1);
    expect(await nas.eventReasons("stopped")).not.toContain("CreateRepeated");
  }, 60_000);

  it("is adopted, not created again, when its request timed out before the service acted", async () => {
    const namespace = await createNamespace(adminKubeConfig(), "in-flight-timeout");
    const held = slowSubscribe(5_000);
    const { nas } = await start(namespace, 3_000);
    await nas.create("timed-out", nasSpec);
    await nas.waitForCondition("timed-out", "Ready", "True", "Available", 30_000);
    await held.done;
    expect(made("timed-out").nas).toHaveLength(1);
    expect(made("timed-out").subscribes).toHaveLength(1);
    expect(await nas.eventReasons("timed-out")).not.toContain("CreateRepeated");
  }, 60_000);
});
