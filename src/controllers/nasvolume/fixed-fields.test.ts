import { describe, expect, it } from "vitest";
import type { NasInstance } from "../../service/schemas/nas.js";
import { nasFixedFields } from "./controller.js";
import type { NasVolumeObject } from "./external.js";

const obj = (spec: Partial<NasVolumeObject["spec"]>): NasVolumeObject => ({
  apiVersion: "aidc.io/v1alpha1",
  kind: "NasVolume",
  metadata: { name: "data", namespace: "ns" },
  spec: { productCode: "nas.capacity.standard", deletionPolicy: "Orphan", ...spec },
});
const remote: NasInstance = {
  id: "nas-1",
  name: "data",
  aidcId: 1,
  resource: { productCode: "nas.capacity.standard" },
};

describe("nasFixedFields, what an adopted NAS contradicts in the spec", () => {
  const cases: {
    reason: string;
    spec: Partial<NasVolumeObject["spec"]>;
    remote?: NasInstance;
    want: string[];
  }[] = [
    {
      reason: "a spec that says the resource's values contradicts nothing",
      spec: { name: "data", aidcId: 1 },
      want: [],
    },
    {
      reason: "another product is named",
      spec: { productCode: "nas.performance" },
      want: ["productCode"],
    },
    {
      reason: "another name and compute center are named",
      spec: { name: "other", aidcId: 2 },
      want: ["name", "aidcId"],
    },
    { reason: "a field the spec leaves out is no contradiction", spec: {}, want: [] },
    {
      reason: "a word in another case is the same word",
      spec: { productCode: "NAS.Capacity.Standard" },
      want: [],
    },
    {
      reason: "a value the record does not show is no contradiction",
      spec: { productCode: "nas.performance", aidcId: 2 },
      remote: { id: "nas-1" },
      want: [],
    },
    {
      reason: "the spec's id of the bound NAS is no contradiction",
      spec: { storageId: "nas-1" },
      want: [],
    },
    {
      reason: "a spec's id set after the object was bound to another NAS is one",
      spec: { storageId: "nas-2" },
      want: ["storageId"],
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      expect(nasFixedFields(obj(c.spec), c.remote ?? remote, "nas-1").map((d) => d.field)).toEqual(
        c.want,
      );
    });
  }

  it("gives both values", () => {
    expect(nasFixedFields(obj({ productCode: "nas.performance" }), remote, "nas-1")).toEqual([
      { field: "productCode", spec: "nas.performance", remote: "nas.capacity.standard" },
    ]);
  });
});
