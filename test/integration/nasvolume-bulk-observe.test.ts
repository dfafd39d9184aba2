import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ANNOTATIONS } from "../../src/controllers/managed/decisions.js";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { ObjectsOf } from "../support/managed.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";

const POLL_MS = 1_500;
const K = 6;
const PAGE_CAP = 2;

/**
 * Settled NasVolumes are observed from one shared walk of the NAS list per poll
 * interval, not one detail read each (managed/observe.ts, service/list-snapshot.ts).
 */
describe("NasVolume: settled objects observed in bulk", () => {
  let op: TestOperator;
  let nas: ObjectsOf;
  let namespace = "";
  const ids: string[] = [];

  beforeAll(async () => {
    namespace = await createNamespace(adminKubeConfig(), "nas-bulk");
    op = await startTestOperator({
      controllers: [(deps) => nasVolumeController(deps, { visibilityGraceMs: 1_000 })],
      namespaces: [namespace],
      pollIntervalMs: POLL_MS,
    });
    nas = new ObjectsOf(op.kube, nasVolumeCrd, namespace);
    for (let i = 0; i < K; i++) {
      await nas.create(`bulk-${i}`, { productCode: "nas.capacity.standard", capacityGB: 100 });
    }
    for (let i = 0; i < K; i++) {
      const obj = await nas.waitForCondition(`bulk-${i}`, "Ready", "True", "Available");
      ids.push(obj.metadata?.annotations?.[ANNOTATIONS.externalId] ?? "");
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
    const listed = (await op.admin.state()).nas.length;
    const pages = Math.ceil(listed / PAGE_CAP);
    const byEndpoint = (e: string) => requests.filter((r) => r.endpoint === e).length;
    expect(byEndpoint("getNas")).toBe(0);
    const walks = windowMs / POLL_MS;
    const listCalls = byEndpoint("listNas");
    expect(listCalls).toBeGreaterThanOrEqual((walks - 1) * pages);
    expect(listCalls).toBeLessThanOrEqual((walks + 1) * pages);
    // Nothing else is called for the idle fleet.
    expect(requests.filter((r) => r.endpoint && r.endpoint !== "listNas")).toEqual([]);
  }, 60_000);

  it("shows a remote change in the object's status within one poll interval", async () => {
    const id = ids[1] ?? "";
    const since = await lastSeq();
    const changed = Date.now();
    await op.admin.setNasState(id, { usedGB: 42 });
    const obj = await nas.waitFor(
      "bulk-1",
      (o) => (o.status as { usedGB?: number } | undefined)?.usedGB === 42,
      10_000,
    );
    const took = Date.now() - changed;
    expect(obj.status).toMatchObject({ usedGB: 42, capacityGB: 100 });
    // One poll interval, and the time a walk and a status write take on a busy machine.
    expect(took).toBeLessThan(POLL_MS + 1_000);
    const reads = await op.admin.requests({ since, endpoint: "getNas" });
    expect(reads).toEqual([]);
  }, 30_000);

  it("reads the detail of an object that needs attention (a spec change)", async () => {
    const since = await lastSeq();
    await nas.patchSpec("bulk-2", { mountPath: "/data/bulk_2" });
    await nas.waitFor(
      "bulk-2",
      (o) => (o.status as { mountPath?: string } | undefined)?.mountPath === "/data/bulk_2",
    );
    const reads = await op.admin.requests({ since, endpoint: "getNas" });
    expect(reads.map((r) => r.path).every((p) => p.includes(ids[2] ?? "?"))).toBe(true);
    expect(reads.length).toBeGreaterThan(0);
  }, 30_000);
});
