/**
 * The emulator's own reading of the NAS capacity rule: the spec's cases on their own,
 * the refusals over raw HTTP (the client would refuse first), and the agreement with
 * the operator's reading, which is a separate function (src/controllers/nasvolume/decisions.ts)
 * that this test is the one place to meet.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { nasCapacityRefusal } from "../../controllers/nasvolume/decisions.js";
import { defaultNasProducts } from "../fixtures.js";
import { type EmulatedService, startEmulatedService } from "../harness.js";
import { capacityRefusal, type NasCapacityBounds } from "./nasvolume.capacity.js";

const product = (p: Partial<NasCapacityBounds>): NasCapacityBounds => ({
  name: "n",
  productCode: "nas.x",
  ...p,
});

describe("the emulator's NAS capacity rule, read from the spec", () => {
  it.each([
    {
      reason: "a capacity inside both bounds is allowed",
      p: { paramValueMin: 100, paramValueMax: 1000 },
      gb: 500,
      allowed: true,
    },
    {
      reason: "each bound is allowed itself",
      p: { paramValueMin: 100, paramValueMax: 1000 },
      gb: 1000,
      allowed: true,
    },
    {
      reason: "a capacity below the minimum is refused",
      p: { paramValueMin: 100, paramValueMax: 1000 },
      gb: 99,
      allowed: false,
    },
    {
      reason: "a capacity above the maximum is refused",
      p: { paramValueMin: 100, paramValueMax: 1000 },
      gb: 1001,
      allowed: false,
    },
    {
      reason: "an empty maximum is no limit",
      p: { paramValueMin: 500 },
      gb: 1_000_000,
      allowed: true,
    },
    { reason: "an empty minimum is no limit", p: { paramValueMax: 300 }, gb: 1, allowed: true },
    {
      reason: "without bounds only the default is allowed",
      p: { paramValue: "200" },
      gb: 200,
      allowed: true,
    },
    {
      reason: "without bounds any other capacity is refused",
      p: { paramValue: "200" },
      gb: 201,
      allowed: false,
    },
    { reason: "without bounds and default nothing limits it", p: {}, gb: 7, allowed: true },
    { reason: "zero GB is refused", p: {}, gb: 0, allowed: false },
    { reason: "a fraction of a GB is refused", p: { paramValueMin: 1 }, gb: 1.5, allowed: false },
  ])("$reason", ({ p, gb, allowed }) => {
    expect(capacityRefusal(product(p), gb) === undefined).toBe(allowed);
  });

  it("names the bound and the product in a refusal", () => {
    expect(capacityRefusal(product({ paramValueMin: 100 }), 50)).toBe(
      "capacity 50 GB is below the minimum of 100 GB of NAS product nas.x",
    );
  });

  it("agrees with the operator's reading on every catalog product around its bounds", () => {
    const disagreements: string[] = [];
    for (const p of [...defaultNasProducts(), product({ paramValueMax: 300 }), product({})]) {
      const edges = [p.paramValueMin, p.paramValueMax, Number(p.paramValue)].filter(
        (n): n is number => Number.isFinite(n),
      );
      for (const gb of [0, 1, 2, ...edges.flatMap((n) => [n - 1, n, n + 1]), 1e6]) {
        const emulator = capacityRefusal(p, gb) === undefined;
        const operator = nasCapacityRefusal(p, gb) === undefined;
        if (emulator !== operator) disagreements.push(`${p.productCode} ${gb} GB`);
      }
    }
    expect(disagreements).toEqual([]);
  });
});

describe("the emulator's NAS refusals over raw HTTP", () => {
  let svc: EmulatedService;
  beforeAll(async () => {
    svc = await startEmulatedService();
  });
  afterAll(() => svc.stop());
  beforeEach(() => svc.emulator.state.reset());

  async function post(path: string, body: unknown): Promise<{ status: number; message: string }> {
    const res = await fetch(svc.emulator.url + path, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${svc.apiKey}` },
      body: JSON.stringify(body),
    });
    return (await res.json()) as { status: number; message: string };
  }

  it("refuses a subscription below the product's minimum, and orders nothing", async () => {
    const a = await post("/v1/subscription/nasStorage/create", {
      productCode: "nas.capacity.standard",
      storageParams: { name: "small", storageCapacity: "50" },
    });
    expect(a).toMatchObject({
      status: 400,
      message: expect.stringMatching(/below the minimum of 100 GB/),
    });
    expect(svc.emulator.state.nas.size).toBe(0);
    expect(svc.emulator.state.subscriptions.size).toBe(0);
  });

  it("refuses a capacity other than the default of a product without bounds", async () => {
    const a = await post("/v1/subscription/nasStorage/create", {
      productCode: "nas.fixed.200",
      storageParams: { storageCapacity: "300" },
    });
    expect(a).toMatchObject({
      status: 400,
      message: expect.stringMatching(/only its default of 200 GB/),
    });
  });

  it("refuses a scale past the product's maximum and keeps the capacity", async () => {
    const [id] = (await svc.admin.seed({ nas: [{ quotaGB: 10000 }] })).nas;
    const a = await post(`/v1/nasStorage/instance/${id}/scale`, {
      id,
      scaleType: "ScaleUp",
      capacity: 500,
    });
    expect(a).toMatchObject({
      status: 400,
      message: expect.stringMatching(/above the maximum of 10240 GB/),
    });
    expect(svc.emulator.state.nas.get(id ?? "")?.quotaGB).toBe(10000);
  });
});
