import { describe, expect, it } from "vitest";
import { NAS_VOLUME_REASONS } from "../../crds/nasvolume.js";
import type { NasProduct } from "../../service/schemas/nas.js";
import {
  decideSync,
  nasCapacityRefusal,
  nasDrift,
  nasPhase,
  nasReady,
  type PreflightInput,
  preflightVerdict,
  readScaleRecord,
  type SyncAction,
  type SyncInput,
} from "./decisions.js";

const products: NasProduct[] = [
  {
    name: "std",
    aidcId: 1,
    productCode: "std",
    paramValue: "100",
    paramValueMin: 100,
    paramValueMax: 1000,
  },
  { name: "fixed", aidcId: 1, productCode: "fixed", paramValue: "200" },
  { name: "west", aidcId: 2, productCode: "west", paramValueMin: 100 },
];

describe("preflightVerdict", () => {
  const base: PreflightInput = {
    productCode: "std",
    aidcId: undefined,
    capacityGB: 150,
    products,
    available: true,
  };
  const cases: { reason: string; input: Partial<PreflightInput>; want: string | undefined }[] = [
    {
      reason: "a capacity within the bounds of an available product passes",
      input: {},
      want: undefined,
    },
    {
      reason: "an omitted capacity takes the product's default and passes",
      input: { capacityGB: undefined },
      want: undefined,
    },
    {
      reason: "an unknown product is refused",
      input: { productCode: "nope" },
      want: "ProductNotFoundRefused",
    },
    {
      reason: "a product of another compute center is refused",
      input: { productCode: "west", aidcId: 1 },
      want: "ProductNotFoundRefused",
    },
    {
      reason: "a capacity below the minimum is refused",
      input: { capacityGB: 50 },
      want: "CapacityRefused",
    },
    {
      reason: "a capacity above the maximum is refused",
      input: { capacityGB: 2000 },
      want: "CapacityRefused",
    },
    {
      reason: "a product without bounds allows only its default",
      input: { productCode: "fixed", capacityGB: 300 },
      want: "CapacityRefused",
    },
    {
      reason: "a product without bounds allows its default",
      input: { productCode: "fixed", capacityGB: 200 },
      want: undefined,
    },
    {
      reason: "an unavailable product is refused for now",
      input: { available: false },
      want: "ProductUnavailable",
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      expect(preflightVerdict({ ...base, ...c.input })?.reason).toBe(c.want);
    });
  }

  it("polls again after an unavailable product but not after a bad capacity", () => {
    expect(preflightVerdict({ ...base, available: false })?.retry).toBe(true);
    expect(preflightVerdict({ ...base, capacityGB: 50 })?.retry).toBeUndefined();
  });

  it("names the closest codes, the compute center's first, and the command that lists the center's products", () => {
    const message = preflightVerdict({ ...base, productCode: "wes", aidcId: 1 })?.message;
    expect(message).toBe(
      "NAS product wes is not offered in compute center 1 (closest: std, fixed, west; list them with kubectl get nasproducts -l aidc.io/connection=default_connection,aidc.io/compute-center=1)",
    );
  });

  it("lists the products of the object's ServiceConnection alone, not every account's", () => {
    const input = { ...base, productCode: "wes", connection: "team-a" };
    expect(preflightVerdict(input)?.message).toContain(
      "list them with kubectl get nasproducts -l aidc.io/connection=team-a)",
    );
  });

  it("names at most five codes and counts the others", () => {
    const many: NasProduct[] = Array.from({ length: 40 }, (_, i) => ({
      name: `n${i}`,
      productCode: `nas.${i}`,
    }));
    const message = preflightVerdict({ ...base, products: many, productCode: "nas.x" })?.message;
    expect(message).toContain(
      "(and 35 more); list them with kubectl get nasproducts -l aidc.io/connection=default_connection)",
    );
    expect(message?.match(/nas\.\d+/g)).toHaveLength(5);
  });
});

describe("decideSync", () => {
  const base: SyncInput = {
    desiredGB: 100,
    desiredMountPath: undefined,
    quotaGB: 100,
    usedGB: 10,
    mountPath: "/mnt/a",
    remoteStatus: "Running",
    lastScale: undefined,
    lastScaleAgeMs: Number.NaN,
    scaleSettleMs: 60_000,
  };
  const sent = {
    scaleType: "ScaleUp" as const,
    capacityGB: 50,
    fromGB: 100,
    toGB: 150,
    requestedTime: "2026-01-01T00:00:00Z",
  };
  const cases: { reason: string; input: Partial<SyncInput>; want: SyncAction["action"][] }[] = [
    { reason: "nothing to do when the storage matches the spec", input: {}, want: [] },
    {
      reason: "an omitted capacity keeps the storage's",
      input: { desiredGB: undefined, quotaGB: 500 },
      want: [],
    },
    { reason: "a larger capacity scales up", input: { desiredGB: 150 }, want: ["Scale"] },
    {
      reason: "a smaller capacity above the used amount scales down",
      input: { desiredGB: 50, quotaGB: 100 },
      want: ["Scale"],
    },
    {
      reason: "a shrink below the used amount is refused",
      input: { desiredGB: 50, usedGB: 80 },
      want: ["Refuse"],
    },
    {
      reason: "a storage that is not Running is not scaled yet",
      input: { desiredGB: 150, remoteStatus: "Creating" },
      want: ["Wait"],
    },
    {
      reason: "a recorded scale not yet visible is waited for, never sent again",
      input: { desiredGB: 150, lastScale: sent, lastScaleAgeMs: 1_000 },
      want: ["Wait"],
    },
    {
      reason: "a recorded scale that shows in the quota is done",
      input: { desiredGB: 150, quotaGB: 150, lastScale: sent, lastScaleAgeMs: 1_000 },
      want: [],
    },
    {
      reason:
        "a recorded scale still invisible after the settle time is never re-sent: the user decides",
      input: { desiredGB: 150, lastScale: sent, lastScaleAgeMs: 120_000 },
      want: ["Refuse"],
    },
    {
      reason: "a recorded scale with an unreadable time is not re-sent",
      input: { desiredGB: 150, lastScale: sent, lastScaleAgeMs: Number.NaN },
      want: ["Refuse"],
    },
    {
      reason: "a changed mount path is set",
      input: { desiredMountPath: "/mnt/b" },
      want: ["SetMountPath"],
    },
    {
      reason: "a mount path and a capacity change are both made, mount path first",
      input: { desiredMountPath: "/mnt/b", desiredGB: 200 },
      want: ["SetMountPath", "Scale"],
    },
    {
      reason: "a quota the service did not send as a number is not scaled",
      input: { desiredGB: 200, quotaGB: Number.NaN },
      want: ["Refuse"],
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      expect(decideSync({ ...base, ...c.input }).map((a) => a.action)).toEqual(c.want);
    });
  }

  it("scales by the difference, not to the total", () => {
    expect(decideSync({ ...base, desiredGB: 160 })).toEqual([
      { action: "Scale", record: { scaleType: "ScaleUp", capacityGB: 60, fromGB: 100, toGB: 160 } },
    ]);
    expect(decideSync({ ...base, quotaGB: 160, desiredGB: 120 })).toEqual([
      {
        action: "Scale",
        record: { scaleType: "ScaleDown", capacityGB: 40, fromGB: 160, toGB: 120 },
      },
    ]);
  });
});

describe("nasDrift", () => {
  it("names the field of each action, a scale waited for or refused too", () => {
    expect(nasDrift([])).toEqual([]);
    expect(nasDrift([{ action: "SetMountPath", mountPath: "/b" }])).toEqual(["mountPath"]);
    const capacity: SyncAction[] = [
      { action: "Scale", record: { scaleType: "ScaleUp", capacityGB: 50, fromGB: 100, toGB: 150 } },
      { action: "Wait", message: "a ScaleUp to 150 GB was sent; waiting for the quota to show it" },
      {
        action: "Refuse",
        reason: NAS_VOLUME_REASONS.names.ShrinkBelowUsedRefused,
        message: "used",
      },
    ];
    for (const action of capacity) {
      expect(nasDrift([action])).toEqual(["capacityGB"]);
    }
  });
});

describe("readScaleRecord", () => {
  const cases: { reason: string; raw: string | undefined; ok: boolean }[] = [
    { reason: "an absent annotation is no record", raw: undefined, ok: false },
    { reason: "text that is not JSON is no record", raw: "up by 5", ok: false },
    {
      reason: "a record with an unknown direction is no record",
      raw: '{"scaleType":"Grow","capacityGB":1,"fromGB":1,"toGB":2}',
      ok: false,
    },
    {
      reason: "a complete record is read",
      raw: '{"scaleType":"ScaleUp","capacityGB":1,"fromGB":1,"toGB":2,"requestedTime":"x"}',
      ok: true,
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      expect(readScaleRecord(c.raw) !== undefined).toBe(c.ok);
    });
  }
});

describe("nasReady and nasPhase", () => {
  it("a Running storage is Ready, anything else is not", () => {
    expect(nasReady("Running")).toMatchObject({ status: "True", reason: "Available" });
    expect(nasReady("Creating")).toMatchObject({ status: "False", reason: "Creating" });
    expect(nasReady("Frozen")).toMatchObject({ status: "False", reason: "Unavailable" });
  });

  const cases: { reason: string; input: Parameters<typeof nasPhase>[0]; want: string }[] = [
    {
      reason: "an unbound object without an order is Pending",
      input: { remoteStatus: undefined, subscription: undefined, scaling: false, bound: false },
      want: "Pending",
    },
    {
      reason: "an unbound object with a pending order is Creating",
      input: { remoteStatus: undefined, subscription: "Pending", scaling: false, bound: false },
      want: "Creating",
    },
    {
      reason: "an unbound object whose order failed is Failed",
      input: { remoteStatus: undefined, subscription: "Failed", scaling: false, bound: false },
      want: "Failed",
    },
    {
      reason: "a running storage is Ready",
      input: { remoteStatus: "Running", subscription: "Succeeded", scaling: false, bound: true },
      want: "Ready",
    },
    {
      reason: "a running storage with a scale in flight is Scaling",
      input: { remoteStatus: "Running", subscription: undefined, scaling: true, bound: true },
      want: "Scaling",
    },
    {
      reason: "a storage in a status the operator does not know is Unknown",
      input: { remoteStatus: "Frozen", subscription: undefined, scaling: false, bound: true },
      want: "Unknown",
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      expect(nasPhase(c.input)).toBe(c.want);
    });
  }
});

describe("nasCapacityRefusal", () => {
  const product = (p: Partial<NasProduct>): NasProduct => ({
    name: "n",
    productCode: "nas.x",
    ...p,
  });

  it.each([
    {
      reason: "within both bounds",
      p: { paramValueMin: 100, paramValueMax: 1000 },
      gb: 500,
      ok: true,
    },
    {
      reason: "on the lower bound",
      p: { paramValueMin: 100, paramValueMax: 1000 },
      gb: 100,
      ok: true,
    },
    {
      reason: "below the minimum",
      p: { paramValueMin: 100, paramValueMax: 1000 },
      gb: 99,
      ok: false,
    },
    {
      reason: "above the maximum",
      p: { paramValueMin: 100, paramValueMax: 1000 },
      gb: 1001,
      ok: false,
    },
    { reason: "only a minimum: no upper limit", p: { paramValueMin: 500 }, gb: 100_000, ok: true },
    { reason: "only a maximum: no lower limit", p: { paramValueMax: 50 }, gb: 1, ok: true },
    { reason: "no bounds: the default is allowed", p: { paramValue: "200" }, gb: 200, ok: true },
    { reason: "no bounds: anything else is not", p: { paramValue: "200" }, gb: 300, ok: false },
    { reason: "no bounds and no default: anything", p: {}, gb: 7, ok: true },
    { reason: "a fraction of a GB", p: {}, gb: 1.5, ok: false },
    { reason: "zero", p: {}, gb: 0, ok: false },
  ])("$reason", ({ p, gb, ok }) => {
    expect(nasCapacityRefusal(product(p), gb) === undefined).toBe(ok);
  });

  it("says why, naming the product and the bound", () => {
    expect(nasCapacityRefusal(product({ paramValueMin: 100, paramValueMax: 1000 }), 5000)).toBe(
      "capacity 5000 GB is above the maximum of 1000 GB of NAS product nas.x",
    );
  });
});
