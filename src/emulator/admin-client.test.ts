/**
 * The admin API through EmulatorAdmin: seeding, remote state changes, subscriptions
 * forced to an outcome, faults, the request log, behaviour and reset.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { EmulatorAdminError, type EmulatorConfigPatch } from "./admin-client.js";
import type { FaultRuleInput } from "./faults.js";
import { type EmulatedService, startEmulatedService } from "./harness.js";
import type { SeedInput } from "./seeding.js";

let svc: EmulatedService;

beforeAll(async () => {
  svc = await startEmulatedService({ emulator: { subscriptionDelayMs: 60_000 } });
});
afterAll(() => svc.stop());
beforeEach(() => svc.admin.reset());

async function adminFailure(p: Promise<unknown>): Promise<EmulatorAdminError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof EmulatorAdminError) return err;
    throw err;
  }
  throw new Error("expected the admin call to fail");
}

describe("EmulatorAdmin", () => {
  it("seeds resources and catalog entries and shows them in the state", async () => {
    const ids = await svc.admin.seed({
      nas: [{ name: "a", quotaGB: 300 }],
      tasks: [{ name: "job", workerCount: 2 }],
      trainingProducts: [{ name: "tiny", productCode: "train.tiny", remainingCount: 1 }],
      cci: [{ id: "cci-x", name: "extra", status: "STOPPED" }],
    });
    expect(ids.nas).toHaveLength(1);
    const state = await svc.admin.state();
    expect(state.nas[0]).toMatchObject({ name: "a", quota: "300", status: "Running" });
    expect(state.tasks[0]).toMatchObject({ name: "job", status: "RUNNING" });
    expect(state.trainingProducts.map((p) => p.productCode)).toContain("train.tiny");
    expect(state.cci.map((c) => c.id)).toContain("cci-x");
    expect(await svc.client.listPods(ids.tasks[0] as string)).toHaveLength(2);
  });

  it("takes product codes out of both catalogs", async () => {
    await svc.admin.seed({ removeProductCodes: ["train.cpu.16", "nas.capacity.standard"] });
    const state = await svc.admin.state();
    expect(state.trainingProducts.map((p) => p.productCode)).not.toContain("train.cpu.16");
    expect(state.nasProducts.map((p) => p.productCode)).not.toContain("nas.capacity.standard");
    expect(state.trainingProducts.length).toBeGreaterThan(0);
  });

  it("sets a task's status, which its containers and execution records follow", async () => {
    const [id] = (await svc.admin.seed({ tasks: [{ name: "job" }] })).tasks;
    await svc.admin.setTaskState(id as string, { status: "FAILED", info: "OOMKilled" });
    const task = await svc.client.getTrainingTask(id as string);
    expect(task.status).toBe("FAILED");
    expect(task.execInfos?.at(-1)).toMatchObject({ status: "FAILED", info: "OOMKilled" });
    const res = await svc.client.getPodResource(id as string, `${id}-worker-0`);
    expect(res.containers[0]?.status).toBe("terminated");
  });

  it("sets a NAS's used amount and status", async () => {
    const [id] = (await svc.admin.seed({ nas: [{}] })).nas;
    await svc.admin.setNasState(id as string, { usedGB: 42, status: "Expired" });
    expect(await svc.client.getNas(id as string)).toMatchObject({ used: "42", status: "Expired" });
  });

  it("fails a CCI instance with error details, and clears them", async () => {
    await svc.admin.setCciState("cci-0001", {
      status: "ERROR",
      subStatus: "CREATE_VOLUME_FAILED",
      errorDetails: { errorDescription: "disk gone", suggestion: "recreate" },
    });
    expect(await svc.client.getCciErrorDetails("cci-0001")).toMatchObject({
      errorDescription: "disk gone",
      suggestion: "recreate",
    });
    await svc.admin.setCciState("cci-0001", { errorDetails: null, status: "RUNNING" });
    expect((await svc.client.getCciErrorDetails("cci-0001")).errorDescription).toBe("");
  });

  it("forces a pending subscription to succeed now, or to fail leaving nothing behind", async () => {
    const ok = await svc.client.subscribeNas({ productCode: "nas.fixed.200" });
    const bad = await svc.client.subscribeNas({ productCode: "nas.fixed.200" });
    await svc.admin.resolveSubscription(ok, "Succeeded");
    await svc.admin.resolveSubscription(bad, "Failed", "quota exceeded");
    const okResult = await svc.client.getNasSubscriptionResult(ok);
    expect(okResult.state).toBe("Succeeded");
    expect((await svc.client.getNas(okResult.instanceId as string)).status).toBe("Running");
    expect(await svc.client.getNasSubscriptionResult(bad)).toMatchObject({
      state: "Failed",
      message: "quota exceeded",
    });
    expect((await svc.client.listNas()).records).toHaveLength(1);
  });

  it("manages fault rules", async () => {
    const rules = await svc.admin.setFaults([{ kind: "error", endpoint: "getCci", times: 1 }]);
    expect(rules).toEqual([
      expect.objectContaining({ kind: "error", rate: 1, status: 500, times: 1 }),
    ]);
    const once = svc.newClient({ retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 } });
    await expect(once.getCci("cci-0001")).rejects.toMatchObject({ code: 500 });
    expect(await svc.admin.faults()).toEqual([]);
    await svc.admin.setFaults([{ kind: "drop" }]);
    await svc.admin.clearFaults();
    expect(await svc.admin.faults()).toEqual([]);
  });

  it("reads the request log from a point, by endpoint", async () => {
    await svc.client.listCci();
    const [first] = await svc.admin.requests();
    await svc.client.getCci("cci-0002");
    const later = await svc.admin.requests({ since: first?.seq as number, endpoint: "getCci" });
    expect(later.map((e) => e.path)).toEqual(["/v1/cci/instance/cci-0002"]);
    await svc.admin.clearRequests();
    expect(await svc.admin.requests()).toEqual([]);
  });

  it("changes behaviour and the accepted key at run time", async () => {
    expect(await svc.admin.configure({ subscriptionDelayMs: 0 })).toMatchObject({
      subscriptionDelayMs: 0,
    });
    const key = await svc.client.subscribeNas({ productCode: "nas.fixed.200" });
    expect((await svc.client.getNasSubscriptionResult(key)).state).toBe("Succeeded");
    await svc.admin.configure({ apiKey: "new-key-0123456789", subscriptionDelayMs: 60_000 });
    await expect(svc.client.listCci()).rejects.toMatchObject({ code: 403 });
    svc.emulator.setApiKey(svc.apiKey);
  });

  it("takes a kind's own settings and refuses a negative one", async () => {
    expect(await svc.admin.configure({ volumeTransitionMs: 5 })).toMatchObject({
      volumeTransitionMs: 5,
    });
    expect(svc.emulator.state.behaviour.volumeTransitionMs).toBe(5);
    expect((await adminFailure(svc.admin.configure({ fileStorageDelayMs: -1 }))).httpStatus).toBe(
      400,
    );
    await svc.admin.configure({ volumeTransitionMs: 1000 });
  });

  it("resets to the fixtures", async () => {
    await svc.admin.seed({ nas: [{}] });
    await svc.admin.reset();
    const state = await svc.admin.state();
    expect(state.nas).toEqual([]);
    expect(state.cci).toHaveLength(4);
  });

  it("says what is wrong with a bad admin request", async () => {
    expect((await adminFailure(svc.admin.setNasState("nas-404", { usedGB: 1 }))).httpStatus).toBe(
      404,
    );
    expect((await adminFailure(svc.admin.seed({ nas: [{ quotaGB: -1 }] }))).httpStatus).toBe(400);
    // A field the admin API does not take is refused by name, and nothing changes: a
    // misspelt fault target or setting would otherwise pass unnoticed.
    await svc.admin.setFaults([{ kind: "drop", endpoint: "getCci" }]);
    const misspelt = { kind: "error", endpoints: "listCci" } as unknown as FaultRuleInput;
    const refusedRule = await adminFailure(svc.admin.setFaults([misspelt]));
    expect([refusedRule.httpStatus, refusedRule.message]).toEqual([
      400,
      expect.stringContaining("endpoints"),
    ]);
    expect(await svc.admin.faults()).toEqual([
      expect.objectContaining({ kind: "drop", endpoint: "getCci" }),
    ]);
    const nasBefore = (await svc.admin.state()).nas.length;
    const typo = { nas: [{ name: "typo", quota: 5 }] } as unknown as SeedInput;
    const refusedSeed = await adminFailure(svc.admin.seed(typo));
    expect([refusedSeed.httpStatus, refusedSeed.message]).toEqual([
      400,
      expect.stringContaining("quota"),
    ]);
    expect((await svc.admin.state()).nas).toHaveLength(nasBefore);
    const basePath = { basePath: "/api" } as unknown as EmulatorConfigPatch;
    const refusedSetting = await adminFailure(svc.admin.configure(basePath));
    expect([refusedSetting.httpStatus, refusedSetting.message]).toEqual([
      400,
      expect.stringContaining("basePath"),
    ]);
    expect((await svc.admin.config()).basePath).toBe("");
    const key = await svc.client.subscribeNas({
      productCode: "nas.capacity.west",
      storageParams: { storageCapacity: 100 },
    });
    expect((await adminFailure(svc.admin.resolveSubscription(key, "Succeeded"))).httpStatus).toBe(
      409,
    );
  });
});
