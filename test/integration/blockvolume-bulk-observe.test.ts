import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blockVolumeController } from "../../src/controllers/blockvolume/controller.js";
import { blockVolumeCrd } from "../../src/crds/blockvolume.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { ObjectsOf } from "../support/managed.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";

const POLL_MS = 1_500;
const K = 6;
const PAGE_CAP = 2;
/** The objects attached to an instance (the others are detached). */
const ATTACHED = new Set([0, 1]);

/**
 * Settled BlockVolumes are observed from one shared walk of the volume list per poll
 * interval, not one detail read each (managed/observe.ts, service/list-snapshot.ts).
 */
describe("BlockVolume: settled objects observed in bulk", () => {
  let op: TestOperator;
  let volumes: ObjectsOf;
  const ids: string[] = [];

  beforeAll(async () => {
    const namespace = await createNamespace(adminKubeConfig(), "bv-bulk");
    op = await startTestOperator({
      controllers: [(deps) => blockVolumeController(deps, { visibilityGraceMs: 1_000 })],
      namespaces: [namespace],
      pollIntervalMs: POLL_MS,
      emulatorOptions: { volumeTransitionMs: 200 },
    });
    volumes = new ObjectsOf(op.kube, blockVolumeCrd, namespace);
    for (let i = 0; i < K; i++) {
      await volumes.create(`bulk-${i}`, {
        sizeGB: 5,
        volumeType: "ssd",
        ...(ATTACHED.has(i) ? { attachTo: { instanceId: "cci-0001" } } : {}),
      });
    }
    for (let i = 0; i < K; i++) {
      const reason = ATTACHED.has(i) ? "Attached" : "Detached";
      const obj = await volumes.waitForCondition(`bulk-${i}`, "Ready", "True", reason);
      ids.push(String((obj.status as { volumeId?: string } | undefined)?.volumeId));
    }
    // Several pages per walk: the cost of a walk is its pages.
    await op.admin.configure({ pageSizeCap: PAGE_CAP });
  }, 90_000);

  afterAll(async () => {
    await op?.stop();
  });

  const lastSeq = async () => (await op.admin.requests()).at(-1)?.seq ?? 0;

  it("makes about one list walk per poll interval and no detail reads over an idle window", async () => {
    // Every object has had a routine poll since it settled.
    await new Promise((r) => setTimeout(r, 2 * POLL_MS));
    const since = await lastSeq();
    const windowMs = 6 * POLL_MS;
    await new Promise((r) => setTimeout(r, windowMs));
    const requests = await op.admin.requests({ since });
    const pages = Math.ceil(K / PAGE_CAP);
    const byEndpoint = (e: string) => requests.filter((r) => r.endpoint === e).length;
    expect(byEndpoint("getVolume")).toBe(0);
    const walks = windowMs / POLL_MS;
    const listCalls = byEndpoint("listVolumes");
    expect(listCalls).toBeGreaterThanOrEqual((walks - 1) * pages);
    expect(listCalls).toBeLessThanOrEqual((walks + 1) * pages);
    // Nothing else is called for the idle fleet.
    expect(requests.filter((r) => r.endpoint && r.endpoint !== "listVolumes")).toEqual([]);
  }, 60_000);

  it("shows a volume attached elsewhere outside within one poll interval, read in detail", async () => {
    const id = ids[3] ?? "";
    const since = await lastSeq();
    const changed = Date.now();
    await op.admin.setVolumeState(id, { status: "in-use", instanceId: "cci-0002" });
    const obj = await volumes.waitForCondition("bulk-3", "Ready", "False", "AttachedElsewhere");
    const took = Date.now() - changed;
    expect(obj.status).toMatchObject({ attachedInstanceId: "cci-0002" });
    // One poll interval, and the time a walk and a status write take on a busy machine.
    expect(took).toBeLessThan(POLL_MS + 1_000);
    const reads = await op.admin.requests({ since, endpoint: "getVolume" });
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.every((r) => r.path.includes(id))).toBe(true);
    await op.admin.setVolumeState(id, { status: "available", instanceId: null });
  }, 30_000);

  it("attaches again, within one poll interval, a volume detached outside", async () => {
    const id = ids[0] ?? "";
    const since = await lastSeq();
    const changed = Date.now();
    await op.admin.setVolumeState(id, { status: "available", instanceId: null });
    let attach: { time?: string } | undefined;
    while (!attach && Date.now() - changed < 10_000) {
      await new Promise((r) => setTimeout(r, 100));
      attach = (await op.admin.requests({ since, endpoint: "attachVolume" })).find((r) =>
        r.path.includes(id),
      );
    }
    expect(attach).toBeDefined();
    expect(Date.parse(attach?.time ?? "") - changed).toBeLessThan(POLL_MS + 1_000);
    await volumes.waitFor(
      "bulk-0",
      (o) => (o.status as { attachedInstanceId?: string })?.attachedInstanceId === "cci-0001",
    );
  }, 30_000);
});
