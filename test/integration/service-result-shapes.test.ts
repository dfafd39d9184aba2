/**
 * Subscription results of other shapes (issue 15, item 5): an integer state or other
 * field names hold the object with a condition naming the config key to set; with
 * `service.subscriptionResult` configured, the same answers are read and the order
 * finishes, with no second order.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import { startTestOperator, TEST_API_KEY, type TestOperator } from "../support/operator.js";

const NAS_SPEC = { productCode: "nas.capacity.standard", capacityGB: 100 };

describe("subscription results of another shape", () => {
  let emulator: RunningEmulator;
  const operators: TestOperator[] = [];

  beforeAll(async () => {
    emulator = await startEmulator({
      apiKey: TEST_API_KEY,
      subscriptionDelayMs: 200,
      subscriptionResultShape: "integerStatus",
    });
  });
  afterAll(async () => {
    for (const op of operators) await op.stop();
    await emulator?.stop();
  });

  const start = async (namespace: string, config: Record<string, unknown> = {}) => {
    const op = await startTestOperator({
      controllers: [nasVolumeController],
      namespaces: [namespace],
      emulator,
      config: { holdBackoff: { baseMs: 1_000, maxMs: 2_000 }, ...config },
    });
    operators.push(op);
    return op;
  };
  const subscribes = async (op: TestOperator, name: string) =>
    (await op.admin.requests({ endpoint: "subscribeNas" })).filter(
      (r) => (r.body as { storageParams?: { name?: string } })?.storageParams?.name === name,
    );

  it("holds an order whose result has an integer state, naming the config key, and finishes it once mapped", async () => {
    const namespace = await createNamespace(adminKubeConfig(), "result-int");
    const unmapped = await start(namespace);
    const nas = new ObjectsOf(unmapped.kube, nasVolumeCrd, namespace);
    await nas.create("int-state", NAS_SPEC);
    const held = await nas.waitForCondition(
      "int-state",
      "Synced",
      "False",
      "SubscriptionResultUnknownTerminal",
    );
    expect(conditionOf(held, "Synced")?.message).toMatch(
      /unknown subscription state "2".*service\.subscriptionResult\.states/,
    );
    expect(conditionOf(held, "Ready")?.status).toBe("False");
    await unmapped.stop();

    const mapped = await start(namespace, {
      service: {
        baseUrl: emulator.url,
        allowInsecureHttp: true,
        subscriptionResult: { states: { "1": "Pending", "2": "Succeeded", "3": "Failed" } },
      },
    });
    const ready = await nas.waitForCondition("int-state", "Ready", "True");
    expect((ready.status as { storageId?: string }).storageId).toBeTruthy();
    expect(await subscribes(mapped, "int-state")).toHaveLength(1);
    expect((await mapped.admin.state()).nas.filter((n) => n.name === "int-state")).toHaveLength(1);
  });

  it("reads results with other field names through stateField, instanceIdField and messageField", async () => {
    emulator.state.behaviour.subscriptionResultShape = "renamedFields";
    try {
      const namespace = await createNamespace(adminKubeConfig(), "result-renamed");
      const op = await start(namespace, {
        service: {
          baseUrl: emulator.url,
          allowInsecureHttp: true,
          subscriptionResult: {
            stateField: "orderState",
            instanceIdField: "createdResourceId",
            messageField: "remark",
          },
        },
      });
      const nas = new ObjectsOf(op.kube, nasVolumeCrd, namespace);
      await nas.create("renamed", NAS_SPEC);
      const ready = await nas.waitForCondition("renamed", "Ready", "True");
      const [remote] = (await op.admin.state()).nas.filter((n) => n.name === "renamed");
      expect((ready.status as { storageId?: string }).storageId).toBe(remote?.id);
      expect(ready.metadata?.annotations?.["aidc.io/external-id"]).toBe(remote?.id);
    } finally {
      emulator.state.behaviour.subscriptionResultShape = "integerStatus";
    }
  });
});
