import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ANNOTATIONS } from "../../src/controllers/managed/decisions.js";
import { SCALE_ANNOTATION } from "../../src/controllers/nasvolume/capacity.js";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { clientTokenInDescription } from "../../src/service/schemas/create.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { conditionOf, EVENTS, ObjectsOf } from "../support/managed.js";
import { startTestOperator, TEST_API_KEY, type TestOperator } from "../support/operator.js";

/** The NasVolume controller against a real API server and the emulator. */
describe("NasVolume controller", () => {
  let op: TestOperator;
  let nas: ObjectsOf;
  let namespace = "";

  beforeAll(async () => {
    namespace = await createNamespace(adminKubeConfig(), "nasvolume");
    op = await startTestOperator({
      controllers: [(deps) => nasVolumeController(deps, { visibilityGraceMs: 1_000 })],
      namespaces: [namespace],
      service: { endpoints: { deleteNas: "DELETE /v1/nasStorage/instance/{id}" } },
    });
    nas = new ObjectsOf(op.kube, nasVolumeCrd, namespace);
  }, 60_000);

  afterAll(async () => {
    await op?.stop();
  });

  const subscribesNamed = async (name: string) =>
    (await op.admin.requests({ endpoint: "subscribeNas" })).filter(
      (r) => (r.body as { storageParams?: { name?: string } }).storageParams?.name === name,
    );
  const remoteNamed = async (name: string) =>
    (await op.admin.state()).nas.filter((n) => n.name === name);
  const externalId = (o: { metadata?: { annotations?: Record<string, string> } }) =>
    o.metadata?.annotations?.[ANNOTATIONS.externalId] ?? "";

  it("subscribes a NAS with the client token in its description and becomes Ready", async () => {
    await nas.create("ready", {
      productCode: "nas.capacity.standard",
      capacityGB: 150,
      mountPath: "/data/ready",
      description: "team data",
    });
    const obj = await nas.waitForCondition("ready", "Ready", "True", "Available");
    const status = obj.status as Record<string, unknown>;
    expect(status).toMatchObject({
      phase: "Ready",
      capacityGB: 150,
      mountPath: "/data/ready",
      productCode: "nas.capacity.standard",
      subscription: { outcome: "Succeeded" },
      // The service's fields a user looks for; the description without the operator's marks.
      description: "team data",
      tenantId: "tenant-0001",
      creator: "Emulated User",
      sharePolicy: "tenant",
    });
    expect(conditionOf(obj, "Synced")).toMatchObject({ status: "True", observedGeneration: 1 });
    expect(status.storageId).toBe(externalId(obj));
    expect(obj.metadata?.annotations?.[ANNOTATIONS.subscriptionKey]).toBe(status.subscriptionKey);
    // The create's marker stays beside the id it led to (managed/decisions.ts).
    expect(obj.metadata?.annotations?.[ANNOTATIONS.createPending]).toBeDefined();
    expect(obj.metadata?.finalizers).toContain("aidc.io/nasvolume");
    const subscribes = await subscribesNamed("ready");
    expect(subscribes).toHaveLength(1);
    const body = subscribes[0]?.body as { storageParams: Record<string, string> } | undefined;
    const params = body?.storageParams ?? {};
    expect(params).toMatchObject({
      name: "ready",
      storageCapacity: "150",
      mountPath: "/data/ready",
    });
    // The client token, then the owner mark of the object (managed/tenancy.ts).
    expect(params.description).toMatch(
      /^team data \[aidc-token:[^\]]+\] \[aidc-owner:[0-9a-f]{16}\.[0-9a-f]{16}\]$/,
    );
    expect(clientTokenInDescription(params.description)).toBeTruthy();
    await nas.waitForEvents("ready", ["CreateRequested", "Created"]);
  });

  it("refuses a capacity outside the product's bounds without placing an order", async () => {
    await nas.create("too-small", { productCode: "nas.capacity.standard", capacityGB: 50 });
    const obj = await nas.waitForCondition("too-small", "Ready", "False", "CapacityRefused");
    expect(conditionOf(obj, "Ready")?.message).toContain("below the minimum of 100 GB");
    expect((obj.status as { phase?: string }).phase).toBe("Pending");
    expect(await subscribesNamed("too-small")).toHaveLength(0);
  });

  it("refuses an unavailable product without placing an order", async () => {
    await nas.create("west", { productCode: "nas.capacity.west", aidcId: 2, capacityGB: 200 });
    const obj = await nas.waitForCondition("west", "Ready", "False", "ProductUnavailable");
    expect(conditionOf(obj, "Ready")?.message).toContain("nas-storage-available answered false");
    expect(await subscribesNamed("west")).toHaveLength(0);
  });

  it("reports a failed subscription and tries again for a new generation", async () => {
    await op.admin.configure({ subscriptionDelayMs: 60_000 });
    try {
      await nas.create("fails", { productCode: "nas.capacity.standard", capacityGB: 100 });
      const pending = await nas.waitFor("fails", (o) =>
        Boolean(o.metadata?.annotations?.[ANNOTATIONS.subscriptionKey]),
      );
      const key = pending.metadata?.annotations?.[ANNOTATIONS.subscriptionKey] ?? "";
      await op.admin.resolveSubscription(key, "Failed", "insufficient NAS capacity in aidc-east-1");
      const failed = await nas.waitForCondition("fails", "Ready", "False", "CreateFailed");
      expect(conditionOf(failed, "Ready")?.message).toContain("insufficient NAS capacity");
      expect(failed.status).toMatchObject({ phase: "Failed", subscription: { outcome: "Failed" } });
      await nas.waitForEvents("fails", ["CreateFailed"]);
      await new Promise((r) => setTimeout(r, 1_500));
      expect(await subscribesNamed("fails")).toHaveLength(1);
    } finally {
      await op.admin.configure({ subscriptionDelayMs: 300 });
    }
    await nas.patchSpec("fails", { capacityGB: 120 });
    await nas.waitForCondition("fails", "Ready", "True");
    expect(await subscribesNamed("fails")).toHaveLength(2);
  });

  it("scales up and down by the difference and records the request", async () => {
    await nas.create("scaled", { productCode: "nas.capacity.standard", capacityGB: 100 });
    const ready = await nas.waitForCondition("scaled", "Ready", "True");
    const id = externalId(ready);
    await nas.patchSpec("scaled", { capacityGB: 160 });
    const up = await nas.waitFor(
      "scaled",
      (o) => (o.status as { capacityGB?: number }).capacityGB === 160,
    );
    expect(up.status).toMatchObject({
      lastScale: { scaleType: "ScaleUp", capacityGB: 60, fromGB: 100, toGB: 160 },
    });
    await nas.patchSpec("scaled", { capacityGB: 120 });
    await nas.waitFor("scaled", (o) => (o.status as { capacityGB?: number }).capacityGB === 120);
    const scales = await op.admin.requests({ endpoint: "scaleNas" });
    expect(scales.filter((r) => r.path.includes(id)).map((r) => r.body)).toEqual([
      { id, scaleType: "ScaleUp", capacity: 60 },
      { id, scaleType: "ScaleDown", capacity: 40 },
    ]);
    const obj = await nas.get("scaled");
    expect(JSON.parse(obj?.metadata?.annotations?.[SCALE_ANNOTATION] ?? "{}")).toMatchObject({
      scaleType: "ScaleDown",
      fromGB: 160,
      toGB: 120,
    });
  });

  it("refuses to shrink below the used amount", async () => {
    await nas.create("full", { productCode: "nas.capacity.standard", capacityGB: 200 });
    const id = externalId(await nas.waitForCondition("full", "Ready", "True"));
    await op.admin.setNasState(id, { usedGB: 150 });
    await nas.patchSpec("full", { capacityGB: 120 });
    const obj = await nas.waitForCondition("full", "Synced", "False", "ShrinkBelowUsedRefused");
    expect(conditionOf(obj, "Synced")?.message).toContain("150 GB in use");
    expect((obj.status as { capacityGB?: number }).capacityGB).toBe(200);
    const scales = await op.admin.requests({ endpoint: "scaleNas" });
    expect(scales.filter((r) => r.path.includes(id))).toHaveLength(0);
  });

  it("refuses a scale beyond the product's maximum without calling the service", async () => {
    await nas.create("capped", { productCode: "nas.capacity.standard", capacityGB: 100 });
    const id = externalId(await nas.waitForCondition("capped", "Ready", "True"));
    await nas.patchSpec("capped", { capacityGB: 20_000 });
    const obj = await nas.waitForCondition("capped", "Synced", "False", "CapacityRefused");
    expect(conditionOf(obj, "Synced")?.message).toContain("above the maximum of 10240 GB");
    const scales = await op.admin.requests({ endpoint: "scaleNas" });
    expect(scales.filter((r) => r.path.includes(id))).toHaveLength(0);
  });

  it("changes the mount path with PUT mountPath", async () => {
    await nas.create("moved", { productCode: "nas.capacity.standard", mountPath: "/data/old" });
    const id = externalId(await nas.waitForCondition("moved", "Ready", "True"));
    await nas.patchSpec("moved", { mountPath: "/data/new" });
    await nas.waitFor(
      "moved",
      (o) => (o.status as { mountPath?: string }).mountPath === "/data/new",
    );
    const puts = await op.admin.requests({ endpoint: "updateNasMountPath" });
    expect(puts.filter((r) => r.path.includes(id)).map((r) => r.body)).toEqual([
      { mountPath: "/data/new" },
    ]);
  });

  it("reports an unreadable answer of the service in Synced and recovers when it is readable again", async () => {
    await nas.create("garbled", { productCode: "nas.capacity.standard" });
    await nas.waitForCondition("garbled", "Ready", "True");
    await op.admin.setFaults([{ kind: "malformed", endpoint: "getNas" }]);
    try {
      // A settled object's poll reads the NAS list; a spec change makes it read the detail.
      await nas.patchSpec("garbled", { mountPath: "/data/look_again" });
      const obj = await nas.waitForCondition("garbled", "Synced", "False");
      expect(conditionOf(obj, "Synced")?.message).toContain("cannot observe the remote resource");
      expect(conditionOf(obj, "Ready")?.status).toBe("True");
    } finally {
      await op.admin.clearFaults();
    }
    await nas.waitForCondition("garbled", "Synced", "True");
  });

  it("adopts an existing storage by spec.storageId without ordering", async () => {
    const key = await op.service.subscribeNas({
      productCode: "nas.capacity.standard",
      storageParams: { name: "existing-dir", storageCapacity: 300 },
    });
    const id = await eventually(
      async () => (await op.service.getNasSubscriptionResult(key)).instanceId,
    );
    await nas.create("adopted", { productCode: "nas.capacity.standard", storageId: id });
    const obj = await nas.waitForCondition("adopted", "Ready", "True");
    expect(obj.status).toMatchObject({ storageId: id, capacityGB: 300, name: "existing-dir" });
    expect(externalId(obj)).toBe(id);
    expect(await subscribesNamed("adopted")).toHaveLength(0);
  });

  it("changes nothing of a storage it adopts whose product the spec misstates: FixedFieldsDiffer", async () => {
    const key = await op.service.subscribeNas({
      productCode: "nas.capacity.standard",
      storageParams: { name: "misstated-dir", storageCapacity: 100 },
    });
    const id = await eventually(
      async () => (await op.service.getNasSubscriptionResult(key)).instanceId,
    );
    const since = op.emulator.requestLog.lastSeq();
    const spec = { productCode: "nas.performance", storageId: id, capacityGB: 500 };
    await nas.create("misstated", { ...spec, mountPath: "/mnt/other" });
    const obj = await nas.waitForCondition("misstated", "Synced", "False", "FixedFieldsDiffer");
    // A few polls: still no scale, no mount path change of the storage the spec misstates.
    await new Promise((r) => setTimeout(r, 1_500));
    const writes = op.emulator.requestLog
      .read({ since })
      .filter((r) => r.method !== "GET" && r.path.includes(id));
    expect(writes.map((r) => r.endpoint)).toEqual([]);
    expect(conditionOf(obj, "Synced")?.message).toContain("nothing of it is changed meanwhile");
    expect(conditionOf(await nas.get("misstated"), "Synced")?.reason).toBe("FixedFieldsDiffer");
  });

  it("stalls on a spec.storageId that does not exist, with a remedy the CRD allows", async () => {
    await nas.create("ghost", { productCode: "nas.capacity.standard", storageId: "nas-ghost-1" });
    const obj = await nas.waitForCondition("ghost", "Ready", "False", "RemoteNotFound");
    const ready = conditionOf(obj, "Ready");
    expect(ready?.message).toContain("delete this object and create a new one");
    expect(ready?.message).not.toContain("remove the annotation");
    expect(conditionOf(obj, "Stalled")).toMatchObject({ status: "True", reason: "RemoteNotFound" });
    expect(conditionOf(obj, "Reconciling")).toBeUndefined();
    // The remedy works: the object can be deleted (nothing remote to delete) and
    // created anew without the id.
    await nas.delete("ghost");
    await nas.waitForGone("ghost");
    await nas.create("ghost", { productCode: "nas.capacity.standard" });
    await nas.waitForCondition("ghost", "Ready", "True");
  });

  it("leaves the storage in the service when an Orphan object is deleted", async () => {
    await nas.create("orphaned", { productCode: "nas.capacity.standard" });
    await nas.waitForCondition("orphaned", "Ready", "True");
    await nas.delete("orphaned");
    await nas.waitForGone("orphaned");
    expect(await remoteNamed("orphaned")).toHaveLength(1);
  });

  it("deletes the storage when a Delete object is deleted", async () => {
    await nas.create("deleted", { productCode: "nas.capacity.standard", deletionPolicy: "Delete" });
    const id = externalId(await nas.waitForCondition("deleted", "Ready", "True"));
    // The delete operation is configured: the policy can be honoured, and says so.
    await nas.waitForCondition("deleted", "DeletionPolicy", "True", "DeletePolicyHonoured");
    await nas.delete("deleted");
    await nas.waitForGone("deleted");
    expect(await remoteNamed("deleted")).toHaveLength(0);
    const deletes = await op.admin.requests({ endpoint: "deleteNas" });
    expect(deletes.map((r) => r.path)).toContain(`/v1/nasStorage/instance/${id}`);
  });

  it("keeps the finalizer while the service still shows a deleted storage, and releases the object once it is gone", async () => {
    await op.admin.configure({ nasReleaseDelayMs: 5_000 });
    try {
      await nas.create("releasing", {
        productCode: "nas.capacity.standard",
        deletionPolicy: "Delete",
      });
      const id = externalId(await nas.waitForCondition("releasing", "Ready", "True"));
      await nas.delete("releasing");
      const waiting = await nas.waitForCondition("releasing", "Ready", "False", "Deleting");
      expect(conditionOf(waiting, "Ready")?.message).toContain(id);
      expect(conditionOf(waiting, "Reconciling")?.status).toBe("True");
      expect((await remoteNamed("releasing")).map((n) => n.status)).toEqual(["Releasing"]);
      await nas.waitForGone("releasing");
      expect(await remoteNamed("releasing")).toHaveLength(0);
      const deletes = await op.admin.requests({ endpoint: "deleteNas" });
      expect(deletes.filter((r) => r.path === `/v1/nasStorage/instance/${id}`)).toHaveLength(1);
    } finally {
      await op.admin.configure({ nasReleaseDelayMs: 0 });
    }
  });

  it("puts the API key in no status, annotation or event", async () => {
    await nas.create("keyless", { productCode: "nas.capacity.standard" });
    await nas.waitForCondition("keyless", "Ready", "True");
    const objects = await op.kube.list(nasVolumeCrd, namespace);
    const events = await op.kube.list(EVENTS, namespace);
    expect(objects.items.length).toBeGreaterThan(0);
    expect(JSON.stringify([objects, events])).not.toContain(TEST_API_KEY);
  });
});
