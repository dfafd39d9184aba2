/**
 * The product catalogs, and NAS availability per compute center and product, are read
 * once per TTL (preflights of many objects share one answer); a failed read is not
 * remembered.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type EmulatedService, startEmulatedService } from "../emulator/harness.js";

let svc: EmulatedService;
let now = 0;

beforeAll(async () => {
  svc = await startEmulatedService({});
});
afterAll(() => svc.stop());
beforeEach(() => {
  svc.emulator.requestLog.clear();
  svc.emulator.faults.clear();
  now = 1_000_000;
});

const calls = (path: string) =>
  svc.emulator.requestLog.read().filter((e) => e.path.startsWith(path)).length;

describe("the product catalog cache", () => {
  it("shares one request among concurrent and repeated reads within the TTL", async () => {
    const client = svc.newClient({ catalogTtlMs: 30_000, now: () => now });
    const answers = await Promise.all([1, 2, 3].map(() => client.listNasProducts(1)));
    await client.listNasProducts(1);
    now += 29_000;
    await client.listNasProducts(1);
    expect(answers[0]?.length).toBeGreaterThan(0);
    expect(calls("/v1/product/list-for-nas-storage")).toBe(1);
  });

  it("reads again at once after forgetCatalogs, the cached answers dropped", async () => {
    const client = svc.newClient({ catalogTtlMs: 30_000, now: () => now });
    await client.listTrainingProducts();
    await client.listNasProducts();
    client.forgetCatalogs();
    await client.listTrainingProducts();
    await client.listNasProducts();
    await client.listNasProducts();
    expect(calls("/v1/product/list-for-training-task")).toBe(2);
    expect(calls("/v1/product/list-for-nas-storage")).toBe(2);
  });

  it("reads again after the TTL and per compute center", async () => {
    const client = svc.newClient({ catalogTtlMs: 30_000, now: () => now });
    await client.listTrainingProducts(1);
    await client.listTrainingProducts(2);
    now += 30_000;
    await client.listTrainingProducts(1);
    expect(calls("/v1/product/list-for-training-task")).toBe(3);
  });

  it("caches availability per compute center and product within the TTL", async () => {
    const client = svc.newClient({ catalogTtlMs: 30_000, now: () => now });
    const standard = { aidcId: 1, resourceSpecCode: "nas.capacity.standard" };
    const answers = await Promise.all([1, 2, 3].map(() => client.isNasProductAvailable(standard)));
    expect(answers).toEqual([true, true, true]);
    now += 29_000;
    expect(await client.isNasProductAvailable(standard)).toBe(true);
    expect(calls("/v1/product/nas-storage-available")).toBe(1);
    // Another product, another compute center (a "false" is reused as well).
    expect(
      await client.isNasProductAvailable({ aidcId: 1, resourceSpecCode: "nas.performance" }),
    ).toBe(true);
    const west = { aidcId: 2, resourceSpecCode: "nas.capacity.west" };
    expect(await client.isNasProductAvailable(west)).toBe(false);
    expect(await client.isNasProductAvailable(west)).toBe(false);
    expect(calls("/v1/product/nas-storage-available")).toBe(3);
    now += 1_000; // the first answer is 30 s old
    expect(await client.isNasProductAvailable(standard)).toBe(true);
    expect(calls("/v1/product/nas-storage-available")).toBe(4);
  });

  it("reads the catalog and availability every time with a TTL of 0", async () => {
    const client = svc.newClient({ catalogTtlMs: 0 });
    const q = { aidcId: 1, resourceSpecCode: "nas.capacity.standard" };
    for (let i = 0; i < 2; i++) {
      await client.listNasProducts(1);
      await client.isNasProductAvailable(q);
    }
    expect(calls("/v1/product/list-for-nas-storage")).toBe(2);
    expect(calls("/v1/product/nas-storage-available")).toBe(2);
  });

  it("forgets a failed read so the next one asks again", async () => {
    const client = svc.newClient({
      catalogTtlMs: 30_000,
      now: () => now,
      retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
    });
    svc.emulator.faults.set([{ kind: "error", rate: 1 }]);
    await expect(client.listNasProducts(1)).rejects.toThrow();
    svc.emulator.faults.clear();
    await expect(client.listNasProducts(1)).resolves.not.toHaveLength(0);
    expect(calls("/v1/product/list-for-nas-storage")).toBe(2);
  });
});
