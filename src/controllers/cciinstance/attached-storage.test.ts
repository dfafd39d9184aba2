import { describe, expect, it } from "vitest";
import { blockVolumeCrd } from "../../crds/blockvolume.js";
import { fileSystemCrd } from "../../crds/filesystem.js";
import type { CacheReader } from "../../runtime/cache.js";
import type { KubeObject, ResourceDescriptor } from "../../runtime/resource.js";
import { KeptInstances } from "./announcements.js";
import { attachedStorage, attachedStorageChanges, blockVolumeSource } from "./attached-storage.js";
import type { CciObject } from "./objects.js";

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

describe("a storage change for a CciInstance this process bound", () => {
  const unbound = {
    kind: "CciInstance",
    metadata: { name: "nb", namespace: "ns", uid: "u-1" },
    spec: { name: "by-name" },
  } as CciObject;
  const disk = {
    kind: "BlockVolume",
    metadata: { name: "disk", namespace: "ns" },
    status: { attachedInstanceId: "i-1", volumeId: "vol-1", phase: "Attached" },
  } as KubeObject;
  /** A cache whose copy of the CciInstance is older than its binding write: no id. */
  const stale = {
    get: (res: ResourceDescriptor) => (res.kind === "CciInstance" ? unbound : disk),
    byIndex: () => [],
  } as unknown as CacheReader;

  it("queues it while the cache does not show its binding yet", () => {
    const kept = new KeptInstances();
    const changes = attachedStorageChanges(blockVolumeSource, (id) => kept.boundTo(id));
    expect(changes(disk, stale)).toEqual([]);
    kept.remember({ namespace: "ns", name: "nb" }, unbound, "i-1");
    expect(changes(disk, stale)).toEqual([{ namespace: "ns", name: "nb" }]);
    // A later reconcile of the stale copy keeps the binding noted; a deletion forgets it.
    kept.remember({ namespace: "ns", name: "nb" }, unbound);
    expect(kept.boundTo("i-1")).toEqual([{ namespace: "ns", name: "nb" }]);
    kept.reportDeletion({ namespace: "ns", name: "nb" }, { normal: () => {} } as never);
    expect(kept.boundTo("i-1")).toEqual([]);
  });
});
