/**
 * Steering an object (src/controllers/managed/decisions.ts), against the real API server
 * and the emulator, on NasVolume: spec.managementPolicies (observe-only import, no
 * Create, drift without Update, orphaning without Delete, LateInitialize), the
 * annotation aidc.io/paused and aidc.io/reconcile-requested-at. The emulator's request
 * log is the evidence of what was (not) sent.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import type { RequestLogEntry } from "../../src/emulator/request-log.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";
import { verdictsOf } from "../support/verdicts.js";

const POLL_MS = 500;
let op: TestOperator;
let ns = "";
let nas: ObjectsOf;

beforeAll(async () => {
  ns = await createNamespace(adminKubeConfig(), "steer");
  op = await startTestOperator({
    controllers: [nasVolumeController],
    namespaces: [ns],
    pollIntervalMs: POLL_MS,
    // Resources made outside the cluster may be bound here (tenancy.ts).
    config: { adoption: { namespaces: [ns] } },
    service: { endpoints: { deleteNas: "DELETE /v1/nasStorage/instance/{id}" } },
  });
  nas = new ObjectsOf(op.kube, nasVolumeCrd, ns);
}, 60_000);

afterAll(async () => {
  await op?.stop();
});

/** A NAS made outside the cluster. */
async function seeded(quotaGB: number, mountPath: string): Promise<string> {
  const { nas: ids } = await op.admin.seed({ nas: [{ quotaGB, mountPath, usedGB: 1 }] });
  return ids[0] as string;
}

/** Every request that names `id` in its path or body. */
async function callsAbout(id: string): Promise<RequestLogEntry[]> {
  return (await op.admin.requests()).filter(
    (e) => e.path.includes(id) || JSON.stringify(e.body ?? "").includes(id),
  );
}

/** Every request that is not a read and names `id` in its path or body. */
async function writesTo(id: string): Promise<RequestLogEntry[]> {
  return (await callsAbout(id)).filter((e) => e.method !== "GET");
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const statusOf = (o: KubeObject) => (o.status ?? {}) as Record<string, unknown>;

describe("spec.managementPolicies", () => {
  it("imports a NAS with Observe only: status shows it, drift is reported, nothing is written, deletion leaves it", async () => {
    const id = await seeded(200, "/seeded");
    await nas.create("watched", {
      productCode: "nas.capacity.standard",
      storageId: id,
      capacityGB: 300,
      mountPath: "/other",
      deletionPolicy: "Delete",
      managementPolicies: ["Observe"],
    });
    const o = await nas.waitForCondition("watched", "Synced", "False", "DriftDetected");
    expect(conditionOf(o, "Ready")?.status).toBe("True");
    expect(conditionOf(o, "Synced")?.message).toContain("in mountPath, capacityGB");
    expect(statusOf(o).capacityGB).toBe(200);
    expect(statusOf(o).storageId).toBe(id);
    // Several polls: still nothing sent that changes the NAS.
    await sleep(POLL_MS * 4);
    expect(await writesTo(id)).toEqual([]);
    // DriftDetected holds nothing: the polls go on, and status follows the NAS.
    await op.admin.setNasState(id, { usedGB: 150 });
    const followed = await nas.waitFor("watched", (w) => statusOf(w).usedGB === 150);
    expect(conditionOf(followed, "Synced")?.reason).toBe("DriftDetected");
    await nas.delete("watched");
    await nas.waitForGone("watched");
    expect(await writesTo(id)).toEqual([]);
    expect((await op.service.getNas(id)).quota).toBe("200");
    await nas.waitForEvents("watched", ["Orphaned"]);
  });

  it("says a NAS adopted under a product it was not made with is misdescribed (FixedFieldsDiffer), on every poll, and changes nothing", async () => {
    const id = await seeded(100, "/misdescribed");
    await nas.create("misdescribed", {
      productCode: "nas.performance",
      storageId: id,
      capacityGB: 100,
      mountPath: "/misdescribed",
    });
    const o = await nas.waitForCondition("misdescribed", "Synced", "False", "FixedFieldsDiffer");
    expect(conditionOf(o, "Synced")?.message).toBe(
      'the spec says productCode "nas.performance" (the resource has "nas.capacity.standard"), which the service cannot change: delete this object (deletionPolicy Orphan keeps the resource) and create one with the resource\'s values',
    );
    // The resource itself is fine: Ready says so, the status shows its product.
    expect(conditionOf(o, "Ready")?.status).toBe("True");
    expect(statusOf(o).productCode).toBe("nas.capacity.standard");
    expect(conditionOf(o, "Stalled")?.status).toBe("True");
    await sleep(POLL_MS * 3);
    expect(await writesTo(id)).toEqual([]);
    expect(await nas.eventReasons("misdescribed")).toContain("Adopted");
    await nas.delete("misdescribed");
    await nas.waitForGone("misdescribed");
  });

  it("orders nothing without Create: RemoteNotFound, terminal", async () => {
    await nas.create("nothing", {
      productCode: "nas.capacity.standard",
      managementPolicies: ["Observe", "Update", "Delete"],
    });
    const o = await nas.waitForCondition("nothing", "Ready", "False", "RemoteNotFound");
    expect(conditionOf(o, "Ready")?.message).toContain("has no Create");
    expect(conditionOf(o, "Stalled")?.status).toBe("True");
    await sleep(POLL_MS * 2);
    expect(await op.admin.requests({ endpoint: "subscribeNas" })).toEqual([]);
  });

  it("says an id set on a NAS already bound to another is misdescribed (FixedFieldsDiffer), binding kept", async () => {
    await nas.create("rebound", { productCode: "nas.capacity.standard", capacityGB: 100 });
    const bound = statusOf(await nas.waitForCondition("rebound", "Ready", "True")).storageId;
    const other = await seeded(100, "/rebound-other");
    // Set once is allowed by the CRD; on a bound object it cannot take effect.
    await nas.patchSpec("rebound", { storageId: other });
    const o = await nas.waitForCondition("rebound", "Synced", "False", "FixedFieldsDiffer");
    expect(conditionOf(o, "Synced")?.message).toContain(
      `the spec says storageId "${other}" (the resource has "${bound}")`,
    );
    expect(statusOf(o).storageId).toBe(bound);
    expect(conditionOf(o, "Stalled")?.status).toBe("True");
    await sleep(POLL_MS * 3);
    expect(await writesTo(other)).toEqual([]);
    await nas.delete("rebound");
    await nas.waitForGone("rebound");
  });

  it("corrects drift once Update is added", async () => {
    const id = await seeded(50, "/first");
    await nas.create("fixed", {
      productCode: "nas.capacity.standard",
      storageId: id,
      mountPath: "/second",
      managementPolicies: ["Observe"],
    });
    await nas.waitForCondition("fixed", "Synced", "False", "DriftDetected");
    expect(await writesTo(id)).toEqual([]);
    await nas.patchSpec("fixed", { managementPolicies: ["Observe", "Update"] });
    await nas.waitFor("fixed", (o) => statusOf(o).mountPath === "/second", 20_000);
    expect((await writesTo(id)).length).toBeGreaterThan(0);
  });

  it("names capacityGB in DriftDetected when Update goes while a scale is under way", async () => {
    await nas.create("scaling", { productCode: "nas.capacity.standard", capacityGB: 100 });
    await nas.waitForCondition("scaling", "Ready", "True", undefined, 30_000);
    await op.admin.configure({ nasScaleDelayMs: 4_000 });
    try {
      await nas.patchSpec("scaling", { capacityGB: 150 });
      await nas.waitForCondition("scaling", "Synced", "True", "Updating");
      await nas.patchSpec("scaling", { managementPolicies: ["Observe"] });
      const o = await nas.waitForCondition("scaling", "Synced", "False", "DriftDetected");
      expect(conditionOf(o, "Synced")?.message).toContain("differs from the spec in capacityGB;");
      // The scale sent before shows: nothing differs any more.
      await nas.waitForCondition("scaling", "Synced", "True", undefined, 20_000);
    } finally {
      await op.admin.configure({ nasScaleDelayMs: 0 });
    }
  });

  it("fills unset capacity and mount path under LateInitialize (a spec write), and only then", async () => {
    const id = await seeded(120, "/late");
    await nas.create("late", {
      productCode: "nas.capacity.standard",
      storageId: id,
      managementPolicies: ["Observe", "LateInitialize"],
    });
    const o = await nas.waitFor(
      "late",
      (x) => (x.spec as { capacityGB?: number }).capacityGB !== undefined,
    );
    expect(o.spec).toMatchObject({ capacityGB: 120, mountPath: "/late" });
    await nas.waitForEvents("late", ["LateInitialized"]);
    const other = await seeded(130, "/kept");
    await nas.create("not-late", {
      productCode: "nas.capacity.standard",
      storageId: other,
      managementPolicies: ["Observe"],
    });
    const p = await nas.waitForCondition("not-late", "Ready", "True");
    expect(statusOf(p).capacityGB).toBe(130);
    expect(p.spec).not.toHaveProperty("capacityGB");
    expect(p.spec).not.toHaveProperty("mountPath");
    expect(await writesTo(id)).toEqual([]);
  });
});

describe("pause and reconcile now", () => {
  it("pauses: one condition, no call on a spec change, a deletion waits; removing the annotation resumes", async () => {
    await nas.create("held", {
      productCode: "nas.capacity.standard",
      capacityGB: 100,
      deletionPolicy: "Delete",
    });
    const ready = await nas.waitForCondition("held", "Ready", "True", undefined, 30_000);
    const id = statusOf(ready).storageId as string;
    await nas.annotate("held", { "aidc.io/paused": "true" });
    await nas.waitForCondition("held", "Synced", "False", "ReconcilePaused");
    await op.admin.clearRequests();
    await nas.patchSpec("held", { capacityGB: 150 });
    await sleep(POLL_MS * 4);
    expect(await callsAbout(id)).toEqual([]);
    await nas.delete("held");
    await sleep(POLL_MS * 3);
    expect(await nas.get("held")).toBeDefined();
    expect(await callsAbout(id)).toEqual([]);
    await nas.annotate("held", { "aidc.io/paused": null });
    await nas.waitForGone("held", 30_000);
    expect((await writesTo(id)).map((e) => e.method)).toContain("DELETE");
  });

  it("paused at creation: Ready=False, so kstatus waits (InProgress, not Current) and Argo CD shows Suspended; resumed, it is created", async () => {
    await nas.create(
      "paused-new",
      { productCode: "nas.capacity.standard", capacityGB: 100 },
      { "aidc.io/paused": "true" },
    );
    const paused = await nas.waitForCondition("paused-new", "Ready", "False", "ReconcilePaused");
    expect(conditionOf(paused, "Synced")?.reason).toBe("ReconcilePaused");
    expect(verdictsOf([paused])).toEqual([{ kstatus: "InProgress", argocd: "Suspended" }]);
    await nas.annotate("paused-new", { "aidc.io/paused": null });
    await nas.waitForCondition("paused-new", "Ready", "True", undefined, 30_000);
  });

  it("paused with its order pending: nothing sent, a request waits; resumed, the order is followed, not placed again", async () => {
    await op.admin.configure({ subscriptionDelayMs: 600_000 });
    try {
      await nas.create("paused-order", { productCode: "nas.capacity.standard", capacityGB: 100 });
      const creating = await nas.waitForCondition("paused-order", "Ready", "False", "Creating");
      const key = statusOf(creating).subscriptionKey as string;
      await nas.annotate("paused-order", { "aidc.io/paused": "true" });
      await nas.waitForCondition("paused-order", "Synced", "False", "ReconcilePaused");
      await op.admin.clearRequests();
      await op.admin.resolveSubscription(key, "Succeeded");
      const made = String(
        (await op.admin.state()).subscriptions.find((s) => s.key === key)?.instanceId,
      );
      await nas.annotate("paused-order", { "aidc.io/reconcile-requested-at": "while-paused" });
      await sleep(POLL_MS * 4);
      expect([...(await callsAbout(key)), ...(await callsAbout(made))]).toEqual([]);
      const held = await nas.waitForCondition("paused-order", "Synced", "False", "ReconcilePaused");
      expect(statusOf(held).lastHandledReconcileAt).toBeUndefined();
      await nas.annotate("paused-order", { "aidc.io/paused": null });
      const o = await nas.waitForCondition("paused-order", "Ready", "True", undefined, 30_000);
      expect(statusOf(o).lastHandledReconcileAt).toBe("while-paused");
      expect(statusOf(o).storageId).toBe(made);
      expect(await op.admin.requests({ endpoint: "subscribeNas" })).toEqual([]);
    } finally {
      await op.admin.configure({ subscriptionDelayMs: 300 });
    }
  });

  it("reads in detail at once on aidc.io/reconcile-requested-at and echoes it in status", async () => {
    await nas.create("asked", { productCode: "nas.capacity.standard", capacityGB: 100 });
    const ready = await nas.waitForCondition("asked", "Ready", "True", undefined, 30_000);
    const id = statusOf(ready).storageId as string;
    // Settled: the routine polls are answered from the NAS list, not the detail.
    await sleep(POLL_MS * 3);
    await op.admin.clearRequests();
    await sleep(POLL_MS * 3);
    const detail = async () =>
      (await op.admin.requests({ endpoint: "getNas" })).filter((e) => e.path.includes(id));
    expect(await detail()).toEqual([]);
    await nas.annotate("asked", { "aidc.io/reconcile-requested-at": "now-1" });
    const o = await nas.waitFor("asked", (x) => statusOf(x).lastHandledReconcileAt === "now-1");
    expect((await detail()).length).toBeGreaterThan(0);
    expect(conditionOf(o, "Synced")?.status).toBe("True");
  });
});
