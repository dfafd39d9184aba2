import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import type { ControllerFactory } from "../../src/controllers/index.js";
import { ANNOTATIONS } from "../../src/controllers/managed/decisions.js";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import { ServiceAccount } from "../../src/service/account.js";
import type { CallContext } from "../../src/service/call-context.js";
import { ServiceClient } from "../../src/service/client.js";
import type { OperationArgs } from "../../src/service/operation-caller.js";
import type { SubscriptionResult } from "../../src/service/schemas/create.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { conditionOf, ObjectsOf, type ReadCondition } from "../support/managed.js";
import {
  diesAfter,
  startTestOperator,
  TEST_API_KEY,
  type TestOperator,
  type TestOperatorOptions,
} from "../support/operator.js";

/**
 * An account whose first subscription poll waits for the order to succeed and then
 * never answers: the operator "dies" after the poll that would bind the id in one
 * write, before that write (the key is not written either).
 */
class DiesAfterFirstPoll extends ServiceAccount {
  /** Shared by every reconcile's calls on the account. */
  static succeeded = false;

  override async request<T>(
    name: string,
    args: OperationArgs,
    schema: z.ZodType<T>,
    context: CallContext,
  ): Promise<T> {
    if (name !== "getNasSubscriptionResult") return super.request(name, args, schema, context);
    const poll = () => super.request(name, args, schema, context) as Promise<SubscriptionResult>;
    let result = await poll();
    while (result.state === "Pending") {
      await new Promise((r) => setTimeout(r, 50));
      result = await poll();
    }
    DiesAfterFirstPoll.succeeded = result.state === "Succeeded";
    return new Promise<T>(() => undefined);
  }
}

const controllers: ControllerFactory[] = [
  (deps) => nasVolumeController(deps, { visibilityGraceMs: 1_000 }),
];

describe("NasVolume controller recovery", () => {
  let emulator: RunningEmulator;
  const operators: TestOperator[] = [];

  beforeAll(async () => {
    emulator = await startEmulator({ apiKey: TEST_API_KEY, subscriptionDelayMs: 200 });
  });

  afterAll(async () => {
    for (const op of operators) await op.stop();
    await emulator?.stop();
  });

  const start = async (namespace: string, extra: Partial<TestOperatorOptions> = {}) => {
    const op = await startTestOperator({
      controllers,
      namespaces: [namespace],
      emulator,
      ...extra,
    });
    operators.push(op);
    return op;
  };
  const remoteNamed = async (op: TestOperator, name: string) =>
    (await op.admin.state()).nas.filter((n) => n.name === name);

  it("creates exactly one NAS when the operator dies between the subscribe POST and its next write", async () => {
    const namespace = await createNamespace(adminKubeConfig(), "nas-crash");
    let subscribed = false;
    const first = await start(namespace, {
      shutdownTimeoutMs: 300,
      makeService: diesAfter("subscribeNas", () => {
        subscribed = true;
      }),
    });
    const nas = new ObjectsOf(first.kube, nasVolumeCrd, namespace);
    await nas.create("crashed", { productCode: "nas.capacity.standard", capacityGB: 100 });
    await eventually(async () => subscribed);
    const before = await nas.get("crashed");
    expect(before?.metadata?.annotations?.[ANNOTATIONS.createPending]).toBeTruthy();
    expect(before?.metadata?.annotations?.[ANNOTATIONS.subscriptionKey]).toBeUndefined();
    await first.stop();

    const second = await start(namespace);
    const obj = await nas.waitForCondition("crashed", "Ready", "True");
    expect(obj.metadata?.annotations?.[ANNOTATIONS.externalId]).toBeDefined();
    expect(await remoteNamed(second, "crashed")).toHaveLength(1);
    const subscribes = await second.admin.requests({ endpoint: "subscribeNas" });
    expect(
      subscribes.filter((r) => JSON.stringify(r.body).includes('"name":"crashed"')),
    ).toHaveLength(1);
    await nas.waitForEvents("crashed", ["Recovered"]);
  });

  it("creates exactly one NAS when the operator dies after the first poll succeeded, before the id write", async () => {
    const namespace = await createNamespace(adminKubeConfig(), "nas-crash-poll");
    DiesAfterFirstPoll.succeeded = false;
    const first = await start(namespace, {
      shutdownTimeoutMs: 300,
      makeService: (o) => new ServiceClient(new DiesAfterFirstPoll(o)),
    });
    const nas = new ObjectsOf(first.kube, nasVolumeCrd, namespace);
    await nas.create("polled", { productCode: "nas.capacity.standard", capacityGB: 100 });
    await eventually(async () => DiesAfterFirstPoll.succeeded);
    const before = await nas.get("polled");
    expect(before?.metadata?.annotations?.[ANNOTATIONS.createPending]).toBeTruthy();
    expect(before?.metadata?.annotations?.[ANNOTATIONS.subscriptionKey]).toBeUndefined();
    expect(before?.metadata?.annotations?.[ANNOTATIONS.externalId]).toBeUndefined();
    await first.stop();

    const second = await start(namespace);
    const obj = await nas.waitForCondition("polled", "Ready", "True");
    expect(obj.metadata?.annotations?.[ANNOTATIONS.externalId]).toBeDefined();
    const remote = await remoteNamed(second, "polled");
    expect(remote).toHaveLength(1);
    expect(obj.metadata?.annotations?.[ANNOTATIONS.externalId]).toBe(remote[0]?.id);
    const subscribes = await second.admin.requests({ endpoint: "subscribeNas" });
    expect(
      subscribes.filter((r) => JSON.stringify(r.body).includes('"name":"polled"')),
    ).toHaveLength(1);
    await nas.waitForEvents("polled", ["Recovered"]);
  });

  it("stops with CreateOutcomeUnknown when it cannot look the NAS up, and binds to the id the user sets", async () => {
    const namespace = await createNamespace(adminKubeConfig(), "nas-unknown");
    let subscribed = false;
    const first = await start(namespace, {
      shutdownTimeoutMs: 300,
      makeService: diesAfter("subscribeNas", () => {
        subscribed = true;
      }),
    });
    const nas = new ObjectsOf(first.kube, nasVolumeCrd, namespace);
    await nas.create("unknown", { productCode: "nas.capacity.standard" });
    await eventually(async () => subscribed);
    await first.stop();

    const second = await start(namespace, { service: { endpoints: { listNas: null } } });
    const stuck = await nas.waitForCondition("unknown", "Synced", "False", "CreateOutcomeUnknown");
    expect(conditionOf(stuck, "Synced")?.message).toContain(ANNOTATIONS.externalId);
    await nas.waitForEvents("unknown", ["CreateOutcomeUnknown"]);
    const [remote] = await remoteNamed(second, "unknown");
    await nas.annotate("unknown", { [ANNOTATIONS.externalId]: String(remote?.id) });
    const bound = await nas.waitForCondition("unknown", "Ready", "True");
    expect((bound.status as { storageId?: string }).storageId).toBe(remote?.id);
    const settled = await nas.waitFor(
      "unknown",
      (o) => conditionOf(o, "Synced")?.status === "True",
    );
    expect(conditionOf(settled, "Synced")?.status).toBe("True");
    expect(await remoteNamed(second, "unknown")).toHaveLength(1);
  });

  it("creates a new NAS after one deleted outside the cluster, once the annotations RemoteNotFound names are removed", async () => {
    const namespace = await createNamespace(adminKubeConfig(), "nas-gone");
    const op = await start(namespace);
    const nas = new ObjectsOf(op.kube, nasVolumeCrd, namespace);
    await nas.create("gone", { productCode: "nas.capacity.standard" });
    const ready = await nas.waitForCondition("gone", "Ready", "True");
    const oldId = (ready.status as { storageId: string }).storageId;
    emulator.state.nas.delete(oldId);
    const lost = await nas.waitForCondition("gone", "Ready", "False", "RemoteNotFound");
    // The message's command, word for word: every annotation it removes.
    const command = conditionOf(lost, "Ready")?.message.match(/\(kubectl ([^)]*)\)/)?.[1] ?? "";
    expect(command).toContain(`-n ${namespace} annotate nasvolume/gone`);
    const removed = command.split(" ").filter((w) => w.startsWith("aidc.io/") && w.endsWith("-"));
    expect(removed).toContain(`${ANNOTATIONS.externalId}-`);
    await nas.annotate("gone", Object.fromEntries(removed.map((w) => [w.slice(0, -1), null])));
    const anew = await nas.waitForCondition("gone", "Ready", "True", undefined, 15_000);
    expect((anew.status as { storageId: string }).storageId).not.toBe(oldId);
    expect(await remoteNamed(op, "gone")).toHaveLength(1);
  });

  it("converges without duplicates when the service fails and is slow", async () => {
    const namespace = await createNamespace(adminKubeConfig(), "nas-chaos");
    const op = await start(namespace);
    await op.admin.setFaults([
      // A failed subscribe acts first: one that did nothing is never sent again.
      { kind: "error", endpoint: "subscribeNas", rate: 0.5, acting: true, httpStatus: 500 },
      { kind: "error", rate: 0.3, exceptEndpoints: ["subscribeNas"] },
      { kind: "latency", rate: 0.5, latencyMs: 100 },
    ]);
    const nas = new ObjectsOf(op.kube, nasVolumeCrd, namespace);
    const names = ["chaos-a", "chaos-b", "chaos-c"];
    try {
      for (const name of names) await nas.create(name, { productCode: "nas.capacity.standard" });
      for (const name of names)
        await nas.waitForCondition(name, "Ready", "True", undefined, 45_000);
    } finally {
      await op.admin.clearFaults();
    }
    const requests = await op.admin.requests();
    expect(requests.filter((r) => r.fault === "error").length).toBeGreaterThan(0);
    for (const name of names) expect(await remoteNamed(op, name)).toHaveLength(1);
  }, 60_000);

  it("says from the first reconcile that a Delete policy cannot be honoured, and orphans on delete", async () => {
    const namespace = await createNamespace(adminKubeConfig(), "nas-nodelete");
    const op = await start(namespace);
    const nas = new ObjectsOf(op.kube, nasVolumeCrd, namespace);
    await nas.create("kept", { productCode: "nas.capacity.standard", deletionPolicy: "Delete" });
    await nas.waitForCondition("kept", "Ready", "True");
    // While the user can still act: a condition, a Warning event, and the REASON column
    // (the first False condition: Ready and Synced are True).
    const live = await nas.waitForCondition("kept", "DeletionPolicy", "False", "NoDeleteOperation");
    expect(conditionOf(live, "DeletionPolicy")?.message).toContain(
      "set spec.deletionPolicy to Orphan",
    );
    const conds = (live.status as { conditions: ReadCondition[] }).conditions;
    expect(conds.find((c) => c.status === "False")?.reason).toBe("NoDeleteOperation");
    await nas.waitForEvents("kept", ["DeletePolicyNotHonoured"]);
    // Choosing Orphan answers it: the condition goes away.
    await nas.patchSpec("kept", { deletionPolicy: "Orphan" });
    await nas.waitFor("kept", (o) => conditionOf(o, "DeletionPolicy") === undefined);
    await nas.patchSpec("kept", { deletionPolicy: "Delete" });
    await nas.waitForCondition("kept", "DeletionPolicy", "False", "NoDeleteOperation");
    await nas.delete("kept");
    await nas.waitForGone("kept");
    expect(await remoteNamed(op, "kept")).toHaveLength(1);
    await nas.waitForEvents("kept", ["DeletePolicyNotHonoured"]);
  });
});
