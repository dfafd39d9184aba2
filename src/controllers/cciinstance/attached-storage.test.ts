import { describe, expect, it } from "vitest";
import { blockVolumeCrd } from "../../crds/blockvolume.js";
import { fileSystemCrd } from "../../crds/filesystem.js";
import type { CacheReader } from "../../runtime/cache.js";
import type { ResourceDescriptor } from "../../runtime/resource.js";
import { attachedStorage } from "./attached-storage.js";

const objects: Record<string, unknown[]> = {
  [blockVolumeCrd.plural]: [
    {
      metadata: { name: "b" },
      status: { attachedInstanceId: "i-1", volumeId: "vol-2", phase: "Attached" },
    },
    {
      metadata: { name: "a" },
      status: { attachedInstanceId: "i-1", volumeId: "vol-1", phase: "Detaching" },
    },
    { metadata: { name: "elsewhere" }, status: { attachedInstanceId: "i-2", volumeId: "vol-3" } },
    { metadata: { name: "detached" }, status: { volumeId: "vol-4", phase: "Available" } },
  ],
  [fileSystemCrd.plural]: [
    {
      metadata: { name: "shared" },
      status: {
        fileSystemId: "fs-1",
        mounts: [
          { name: "n1", state: "Mounted", instanceId: "i-1", mountPath: "/mnt/shared" },
          { name: "n2", state: "Mounted", instanceId: "i-2" },
        ],
      },
    },
  ],
};

/** A cache holding `objects` in namespace `ns` only. */
const cache = {
  list: (res: ResourceDescriptor, namespace?: string) =>
    namespace === "ns" ? (objects[res.plural] ?? []) : [],
} as unknown as CacheReader;

describe("attachedStorage", () => {
  it("lists the volumes attached to the instance and the mounts on it, by kind and name, from the namespace's objects", () => {
    expect(attachedStorage(cache, "ns", "i-1")).toEqual([
      { kind: "BlockVolume", name: "a", id: "vol-1", state: "Detaching" },
      { kind: "BlockVolume", name: "b", id: "vol-2", state: "Attached" },
      {
        kind: "FileSystem",
        name: "shared",
        id: "fs-1",
        state: "Mounted",
        mountPath: "/mnt/shared",
      },
    ]);
  });

  it("shows nothing of another namespace's objects", () => {
    expect(attachedStorage(cache, "other", "i-1")).toEqual([]);
  });

  it("shows nothing for an instance nothing is attached to", () => {
    expect(attachedStorage(cache, "ns", "i-9")).toEqual([]);
  });
});
