/**
 * The product catalogs are read once per TTL (preflights of many objects share one
 * answer); availability is never cached; a failed read is not remembered.
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

  it("reads again after the TTL and per compute center", async () => {
    const client = svc.newClient({ catalogTtlMs: 30_000, now: () => now });
    await client.listTrainingProducts(1);
    await client.listTrainingProducts(2);
    now += 30_000;
    await client.listTrainingProducts(1);
    expect(calls("/v1/product/list-for-training-task")).toBe(3);
  });

  it("never caches availability, and reads every time with a TTL of 0", async () => {
    const client = svc.newClient({ catalogTtlMs: 0 });
    await client.listNasProducts(1);
    await client.listNasProducts(1);
    const cached = svc.newClient({ catalogTtlMs: 30_000, now: () => now });
    const q = { aidcId: 1, resourceSpecCode: "nas.capacity.standard" };
    await cached.isNasProductAvailable(q);
    await cached.isNasProductAvailable(q);
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
