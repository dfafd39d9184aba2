import { describe, expect, it } from "vitest";
import type { BlockVolume as BlockVolumeObject } from "../../crds/blockvolume.js";
import type { BlockVolume as RemoteVolume } from "../../service/index.js";
import { blockVolumeKind } from "./controller.js";

const obj = (spec: Partial<BlockVolumeObject["spec"]>) =>
  ({
    apiVersion: "aidc.io/v1alpha1",
    kind: "BlockVolume",
    metadata: { name: "scratch", namespace: "ns" },
    spec: { sizeGB: 50, volumeType: "ssd", ...spec },
  }) as BlockVolumeObject;
const remote: RemoteVolume = {
  id: "vol-1",
  name: "scratch",
  sizeGB: 50,
  volumeType: "ssd",
};
const fixed = (spec: Partial<BlockVolumeObject["spec"]>) =>
  blockVolumeKind().fixedFields?.(obj(spec), remote, "vol-1");

describe("the BlockVolume's fixed fields, what an adopted volume contradicts in the spec", () => {
  it("are none when the spec says the volume's values and its id", () => {
    expect(fixed({ volumeId: "vol-1" })).toEqual([]);
  });

  it("name a size and a spec's id other than the bound volume's, with both values", () => {
    expect(fixed({ sizeGB: 60, volumeId: "vol-2" })).toEqual([
      { field: "volumeId", spec: "vol-2", remote: "vol-1" },
      { field: "sizeGB", spec: 60, remote: 50 },
    ]);
  });
});
