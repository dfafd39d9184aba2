/**
 * The operator against services whose timing the spec leaves open. One whose resource
 * store lags its order system: a task or NAS whose order succeeded answers its detail
 * read (and its delete) with the unknown-id status for a few seconds; the object waits,
 * saying so, and is Ready once the read answers: never RemoteNotFound (whose advice, to
 * remove the external-id annotation, would order a second resource), never a second
 * order, and a Delete meanwhile deletes it once it is known. One that keeps order
 * results only briefly: a result key it no longer knows (answered 404, 500 or 400 a few
 * polls in a row, or an empty object past the list visibility window) sends the object to its
 * create's client token, which finds the
 * resource; nothing is ordered twice, nothing is left behind. One whose NAS scale, accepted, shows in the quota only later: the change
 * is sent once and waited for, also past the time the operator gives it
 * (ScaleOutcomeUnknown meanwhile), and the object is Ready at the new size by itself.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { trainingJobController } from "../../src/controllers/trainingjob/controller.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { trainingJobCrd } from "../../src/crds/trainingjob.js";
import {
  type EmulatorOptions,
  type RunningEmulator,
  startEmulator,
} from "../../src/emulator/server.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import { startTestOperator, TEST_API_KEY, type TestOperator } from "../support/operator.js";

const jobSpec = {
  image: "registry.example.com/ml/train:1",
  productCode: "train.cpu.16",
  workerCount: 1,
};
const nasSpec = { productCode: "nas.capacity.standard", capacityGB: 100 };
const running = (o: KubeObject) =>
  (o.status as { phase?: string } | undefined)?.phase === "Running";
/** How long the service's detail read lags an order that succeeded. */
const LAG_MS = 3_000;

/**
 * An operator of NasVolumes (deleted with the NAS delete) and TrainingJobs in a new
 * namespace; `windowMs` sets service.listVisibilityWindowMs (its emulator is then
 * started here and stopped with `stop`).
 */
async function operatorOn(
  name: string,
  emulatorOptions: Partial<EmulatorOptions>,
  windowMs?: number,
) {
  const namespace = await createNamespace(adminKubeConfig(), name);
  const own =
    windowMs === undefined
      ? undefined
      : await startEmulator({ subscriptionDelayMs: 300, ...emulatorOptions, apiKey: TEST_API_KEY });
  const service = { allowInsecureHttp: true, timeoutMs: 5_000, rateLimit: null };
  const op = await startTestOperator({
    controllers: [nasVolumeController, trainingJobController],
    namespaces: [namespace],
    ...(own
      ? {
          emulator: own,
          config: {
            service: { ...service, baseUrl: own.url, listVisibilityWindowMs: windowMs },
            // A refused read is held: polled again on this backoff.
            holdBackoff: { baseMs: 500, maxMs: 1_000 },
          },
        }
      : { emulatorOptions }),
    service: { endpoints: { deleteNas: "DELETE /v1/nasStorage/instance/{id}" } },
  });
  const stop = async () => {
    await op.stop();
    await own?.stop();
  };
  const nas = new ObjectsOf(op.kube, nasVolumeCrd, namespace);
  return { op, nas, jobs: new ObjectsOf(op.kube, trainingJobCrd, namespace), stop };
}

describe("a service whose detail read lags its orders", () => {
  let op: TestOperator;
  let nas: ObjectsOf;
  let jobs: ObjectsOf;

  beforeAll(async () => {
    ({ op, nas, jobs } = await operatorOn("service-lag", {
      subscriptionDelayMs: 300,
      detailVisibilityDelayMs: LAG_MS,
    }));
  }, 60_000);
  afterAll(async () => {
    await op?.stop();
  });

  it("waits for a new NAS and a new task to answer their reads, then is Ready: never RemoteNotFound, one order each", async () => {
    const since = op.emulator.requestLog.lastSeq();
    await nas.create("lagging", nasSpec);
    await jobs.create("lagging", jobSpec);
    const seen = new Set<string>();
    const watchReady = (o: KubeObject) => {
      const ready = conditionOf(o, "Ready");
      if (ready) seen.add(`${ready.status}/${ready.reason}`);
    };
    await nas.waitFor("lagging", (o) => {
      watchReady(o);
      return conditionOf(o, "Ready")?.status === "True";
    });
    await jobs.waitFor("lagging", (o) => {
      watchReady(o);
      return running(o);
    });
    // The reads did answer the unknown-id status before the resources were known.
    const reads = op.emulator.requestLog.read({ since, endpoint: "getNas" });
    expect(reads.some((r) => r.status === 404)).toBe(true);
    expect([...seen].filter((s) => s.endsWith("/RemoteNotFound"))).toEqual([]);
    for (const objects of [nas, jobs]) {
      expect(await objects.eventReasons("lagging")).not.toContain("RemoteNotFound");
    }
    const state = op.emulator.state;
    expect([...state.nas.values()].filter((n) => n.name === "lagging")).toHaveLength(1);
    expect([...state.tasks.values()].filter((t) => t.name === "lagging")).toHaveLength(1);
  });

  it("deletes a NAS whose object is deleted before the service knows it, once it does: nothing left behind", async () => {
    await nas.create("gone-early", { ...nasSpec, deletionPolicy: "Delete" });
    const bound = await nas.waitFor(
      "gone-early",
      (o) => o.metadata?.annotations?.["aidc.io/external-id"] !== undefined,
    );
    const id = bound.metadata?.annotations?.["aidc.io/external-id"] ?? "";
    expect(op.emulator.state.isKnown(op.emulator.state.nas.get(id) ?? {})).toBe(false);
    const since = op.emulator.requestLog.lastSeq();
    await nas.delete("gone-early");
    await nas.waitForGone("gone-early", 20_000);
    expect(op.emulator.state.nas.has(id)).toBe(false);
    const deletes = op.emulator.requestLog.read({ since, endpoint: "deleteNas" });
    expect(deletes.some((r) => r.status === 404)).toBe(true);
    expect(deletes.some((r) => r.status === 200)).toBe(true);
  });
});

// A service may answer a key it no longer knows as any unknown id: 404, a 500 or a 400
// (then the key is given up after a few polls that fail in a row), or 200 with an empty
// object (as a result not made yet: given up once the list visibility window has passed).
describe.each([404, 500, 200, 400])(
  "a service that forgets an order's result once it resolved (unknown key: %i)",
  (status) => {
    let op: TestOperator;
    let nas: ObjectsOf;
    let jobs: ObjectsOf;
    let stop: () => Promise<void>;

    beforeAll(async () => {
      ({ op, nas, jobs, stop } = await operatorOn(
        `service-forgets-${status}`,
        { subscriptionDelayMs: 1_500, subscriptionResultRetentionMs: 1, unknownIdStatus: status },
        status === 200 || status === 400 ? 4_000 : undefined,
      ));
    }, 60_000);
    afterAll(async () => {
      await stop?.();
    });

    const resultPolls = (since: number) =>
      op.emulator.requestLog
        .read({ since })
        .filter((r) => r.endpoint?.endsWith("SubscriptionResult"))
        .map((r) => r.status);

    it("finds a NAS and a task whose results it can no longer read by their client tokens, ordering each once", async () => {
      const since = op.emulator.requestLog.lastSeq();
      await nas.create("forgotten", nasSpec);
      await jobs.create("forgotten", jobSpec);
      await nas.waitForCondition("forgotten", "Ready", "True", "Available");
      await jobs.waitFor("forgotten", running);
      expect(resultPolls(since)).toContain(status);
      const state = op.emulator.state;
      expect([...state.nas.values()].filter((n) => n.name === "forgotten")).toHaveLength(1);
      expect([...state.tasks.values()].filter((t) => t.name === "forgotten")).toHaveLength(1);
      await nas.waitForEvents("forgotten", ["Recovered"]);
    });

    it("deletes the NAS of an order whose object was deleted before the order resolved", async () => {
      const since = op.emulator.requestLog.lastSeq();
      await nas.create("forgotten-deleted", { ...nasSpec, deletionPolicy: "Delete" });
      await nas.waitFor(
        "forgotten-deleted",
        (o) => o.metadata?.annotations?.["aidc.io/subscription-key"] !== undefined,
      );
      await nas.delete("forgotten-deleted");
      await nas.waitForGone("forgotten-deleted");
      expect(resultPolls(since)).toContain(status);
      const left = [...op.emulator.state.nas.values()].filter(
        (n) => n.name === "forgotten-deleted",
      );
      expect(left).toEqual([]);
    });
  },
);

describe("a service whose accepted NAS scale shows in the quota later", () => {
  let emulator: RunningEmulator;
  let op: TestOperator;
  let nas: ObjectsOf;

  beforeAll(async () => {
    const namespace = await createNamespace(adminKubeConfig(), "service-scale-later");
    emulator = await startEmulator({ apiKey: TEST_API_KEY, subscriptionDelayMs: 300 });
    op = await startTestOperator({
      controllers: [nasVolumeController],
      namespaces: [namespace],
      emulator,
      // A sent scale counts as lost after 3 s: the 6 s of the second case outlast it.
      config: {
        service: { baseUrl: emulator.url, allowInsecureHttp: true, nasScaleSettleMs: 3_000 },
      },
    });
    nas = new ObjectsOf(op.kube, nasVolumeCrd, namespace);
  }, 60_000);
  afterAll(async () => {
    await op?.stop();
    await emulator?.stop();
  });

  it.each([
    { delayMs: 2_000, waits: "Updating" },
    { delayMs: 6_000, waits: "ScaleOutcomeUnknown" },
  ])(
    "sends a scale once and is Ready at the new size $delayMs ms later ($waits meanwhile)",
    async ({ delayMs, waits }) => {
      await op.admin.configure({ nasScaleDelayMs: delayMs });
      const name = `scale-${delayMs}`;
      await nas.create(name, nasSpec);
      await nas.waitForCondition(name, "Ready", "True", "Available");
      const since = op.emulator.requestLog.lastSeq();
      await nas.patchSpec(name, { capacityGB: 150 });
      await nas.waitFor(name, (o) => conditionOf(o, "Synced")?.reason === waits);
      const grown = await nas.waitFor(
        name,
        (o) =>
          (o.status as { capacityGB?: number }).capacityGB === 150 &&
          conditionOf(o, "Ready")?.status === "True" &&
          conditionOf(o, "Synced")?.reason === "ReconcileSuccess",
      );
      expect(grown.status).toMatchObject({ phase: "Ready" });
      const scales = op.emulator.requestLog.read({ since, endpoint: "scaleNas" });
      expect(scales.map((r) => r.status)).toEqual([200]);
      const id = (grown.status as { storageId: string }).storageId;
      expect(op.emulator.state.nas.get(id)?.quotaGB).toBe(150);
    },
  );
});
