/**
 * What a CciInstance shows of the storage attached to its instance: the BlockVolumes
 * whose status shows them attached to it and the FileSystems whose status shows a mount
 * on it, in the CciInstance's namespace, read from the informer cache (no service
 * call). Each kind is one {@link AttachedStorageSource}; a storage kind added later adds
 * its source to {@link ATTACHED_STORAGE_SOURCES}.
 */
import { type BlockVolume, blockVolumeCrd } from "../../crds/blockvolume.js";
import type { AttachedStorage } from "../../crds/cciinstance.js";
import { type FileSystem, fileSystemCrd } from "../../crds/filesystem.js";
import type { CacheReader } from "../../runtime/cache.js";
import type { ResourceDescriptor } from "../../runtime/resource.js";

/** One kind of storage that can be attached to an instance. */
export interface AttachedStorageSource {
  /** The kind, watched (and cached) by the CciInstance controller. */
  readonly resource: ResourceDescriptor;
  /** The entries of one object of the kind that concern instance `instanceId`. */
  entries(obj: unknown, instanceId: string): AttachedStorage[];
}

/** BlockVolumes: one entry when the status shows the volume attached to the instance. */
export const blockVolumeSource: AttachedStorageSource = {
  resource: blockVolumeCrd,
  entries(obj, instanceId) {
    const v = obj as BlockVolume;
    if (v.status?.attachedInstanceId !== instanceId) return [];
    return [
      {
        kind: "BlockVolume",
        name: v.metadata.name ?? "",
        ...(v.status.volumeId ? { id: v.status.volumeId } : {}),
        ...(v.status.phase ? { state: v.status.phase } : {}),
      },
    ];
  },
};

/** FileSystems: one entry per mount on the instance that the status shows. */
export const fileSystemSource: AttachedStorageSource = {
  resource: fileSystemCrd,
  entries(obj, instanceId) {
    const fs = obj as FileSystem;
    return (fs.status?.mounts ?? [])
      .filter((m) => m.instanceId === instanceId)
      .map((m) => ({
        kind: "FileSystem",
        name: fs.metadata.name ?? "",
        ...(fs.status?.fileSystemId ? { id: fs.status.fileSystemId } : {}),
        state: m.state,
        ...(m.mountPath ? { mountPath: m.mountPath } : {}),
      }));
  },
};

/** Every kind of storage a CciInstance shows. */
export const ATTACHED_STORAGE_SOURCES: readonly AttachedStorageSource[] = [
  blockVolumeSource,
  fileSystemSource,
];

/** The storage of `namespace` attached to `instanceId`, sorted by kind and name. */
export function attachedStorage(
  cache: CacheReader,
  namespace: string,
  instanceId: string,
  sources: readonly AttachedStorageSource[] = ATTACHED_STORAGE_SOURCES,
): AttachedStorage[] {
  const out = sources.flatMap((s) =>
    cache.list(s.resource, namespace).flatMap((o) => s.entries(o, instanceId)),
  );
  return out.sort((a, b) =>
    a.kind === b.kind ? a.name.localeCompare(b.name) : a.kind.localeCompare(b.kind),
  );
}
