import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../runtime/resource.js";
import type { TrainingProduct } from "../../service/schemas/training.js";
import {
  type DesiredProduct,
  mergePatch,
  mirrorChanges,
  nasProductObjects,
  trainingProductObjects,
  verdictKey,
} from "./mirror.js";

const a100: TrainingProduct = {
  name: "A100 x1",
  aidcId: 1,
  productCode: "train.gpu.a100.1",
  cpuCores: "8",
  memoryGB: "64",
  gpuName: "NVIDIA A100 80GB",
  gpuCount: "1",
  diskGB: "200",
  price: "12.50",
  priceUnit: 1,
  remainingCount: 64,
  ext: {},
};
const cpu: TrainingProduct = { name: "CPU", aidcId: 2, productCode: "train.cpu.16", gpuName: "-" };

/** A cluster object as the API server returns `d` (with server fields and others' labels). */
const stored = (d: DesiredProduct, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: "aidc.io/v1alpha1",
  kind: "TrainingProduct",
  metadata: {
    name: d.name,
    resourceVersion: "7",
    labels: { ...d.labels, "someone.else/label": "x" },
    annotations: { note: "kept" },
  },
  spec: { ...d.spec, ...extra },
});

describe("the objects of a training catalog", () => {
  it("carry the product as the service gives it, labelled by connection, center and GPU model", () => {
    const [obj] = trainingProductObjects("team-a", [a100]);
    expect(obj?.labels).toEqual({
      "aidc.io/connection": "team-a",
      "aidc.io/compute-center": "1",
      "aidc.io/gpu-model": "NVIDIA-A100-80GB",
    });
    expect(obj?.spec).toEqual({
      productCode: "train.gpu.a100.1",
      displayName: "A100 x1",
      connection: "team-a",
      computeCenterId: 1,
      cpuCores: "8",
      memoryGB: "64",
      gpuModel: "NVIDIA A100 80GB",
      gpuCount: "1",
      diskGB: "200",
      price: "12.50",
      priceUnit: 1,
      remainingCount: 64,
    });
  });

  it("label a product without GPU gpu-model=none, and leave out what the service left out", () => {
    const [obj] = trainingProductObjects(undefined, [cpu]);
    expect(obj?.labels["aidc.io/gpu-model"]).toBe("none");
    expect(obj?.labels["aidc.io/connection"]).toBe("default_connection");
    expect(obj?.spec).toEqual({
      productCode: "train.cpu.16",
      displayName: "CPU",
      computeCenterId: 2,
    });
  });

  it("leave out a product without code and a second listing of one product", () => {
    const objs = trainingProductObjects(undefined, [a100, { name: "no code" }, { ...a100 }]);
    expect(objs.map((o) => o.spec.productCode)).toEqual(["train.gpu.a100.1"]);
  });
});

describe("the objects of a NAS catalog", () => {
  it("carry the capacity bounds and the availability verdict when known", () => {
    const nas = {
      name: "NAS",
      aidcId: 1,
      productCode: "nas.std",
      paramValue: "100",
      paramValueMin: 50,
      paramValueMax: 1000,
    };
    const known = new Map([[verdictKey("nas.std", 1), false]]);
    expect(nasProductObjects(undefined, [nas], known)[0]?.spec).toMatchObject({
      defaultCapacity: "100",
      minCapacityGB: 50,
      maxCapacityGB: 1000,
      available: false,
    });
    expect(nasProductObjects(undefined, [nas], new Map())[0]?.spec).not.toHaveProperty("available");
  });
});

describe("the mirror's changes", () => {
  const desired = trainingProductObjects(undefined, [a100, cpu]);
  const [gpuObj, cpuObj] = desired as [DesiredProduct, DesiredProduct];

  it.each([
    {
      reason: "an empty cluster: every product created",
      existing: [] as KubeObject[],
      want: { create: [gpuObj.name, cpuObj.name], update: [], remove: [] },
    },
    {
      reason:
        "the same catalog again: nothing written (others' labels and annotations are no change)",
      existing: [stored(gpuObj), stored(cpuObj)],
      want: { create: [], update: [], remove: [] },
    },
    {
      reason: "a changed price: that product updated",
      existing: [stored(gpuObj, { price: "9.99" }), stored(cpuObj)],
      want: { create: [], update: [gpuObj.name], remove: [] },
    },
    {
      reason: "a field added by hand: put back",
      existing: [stored(gpuObj), stored(cpuObj, { price: "0" })],
      want: { create: [], update: [cpuObj.name], remove: [] },
    },
    {
      reason: "a product gone from the catalog: deleted",
      existing: [stored(gpuObj), stored(cpuObj), stored({ ...cpuObj, name: "default-old-1" })],
      want: { create: [], update: [], remove: ["default-old-1"] },
    },
  ])("$reason", ({ existing, want }) => {
    const changes = mirrorChanges(desired, existing);
    expect({
      create: changes.create.map((d) => d.name),
      update: changes.update.map((u) => u.desired.name),
      remove: changes.remove.map((o) => o.metadata?.name),
    }).toEqual(want);
  });

  it("leave an object being deleted to its deletion", () => {
    const going = { ...stored(cpuObj), metadata: { name: "x", deletionTimestamp: "now" } };
    expect(mirrorChanges([], [going]).remove).toEqual([]);
  });
});

describe("mergePatch", () => {
  it("sets what changed and nulls what is gone, field by field", () => {
    expect(
      mergePatch(
        { price: "1", gpuModel: "A", ext: { a: "1", b: "2" } },
        { price: "2", ext: { a: "1" } },
      ),
    ).toEqual({ price: "2", gpuModel: null, ext: { b: null } });
  });
});
