/**
 * What a CciInstance shows of the storage attached to its instance: the BlockVolumes
 * whose status shows them attached to it and the FileSystems whose status shows a mount
 * on it, in the CciInstance's namespace, read from the informer cache (no service
 * call). Each kind is one {@link AttachedStorageSource}; a storage kind added later adds
 * its source to {@link ATTACHED_STORAGE_SOURCES}.
 */
import { isDeepStrictEqual } from "node:util";
import { type BlockVolume, blockVolumeCrd } from "../../crds/blockvolume.js";
import { type AttachedStorage, cciInstanceCrd } from "../../crds/cciinstance.js";
import { type FileSystem, fileSystemCrd } from "../../crds/filesystem.js";
import type { CacheReader } from "../../runtime/cache.js";
import type { MapToKeys } from "../../runtime/controller.js";
import { keyOf, type ObjectKey, type ResourceDescriptor } from "../../runtime/resource.js";
import { BOUND_ID_INDEX } from "../managed/tenancy.js";
import type { CciObject } from "./objects.js";

/** One kind of storage that can be attached to an instance. */
export interface AttachedStorageSource {
  /** The kind, watched (and cached) by the CciInstance controller. */
  readonly resource: ResourceDescriptor;
  /** The entries of one object of the kind that concern instance `instanceId`. */
  entries(obj: unknown, instanceId: string): AttachedStorage[];
  /** The ids of the instances one object of the kind has entries for. */
  instanceIds(obj: unknown): string[];
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
  instanceIds(obj) {
    const id = (obj as BlockVolume).status?.attachedInstanceId;
    return id ? [id] : [];
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
  instanceIds(obj) {
    const ids = (obj as FileSystem).status?.mounts?.map((m) => m.instanceId) ?? [];
    return [...new Set(ids.filter((id): id is string => !!id))];
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

/**
 * The watch map of a storage kind: called with the old and the new state of a change,
 * it names the CciInstances of the object's namespace bound to an instance that state
 * names (found by the ids they claim, tenancy.ts's BOUND_ID_INDEX, and by `boundTo`:
 * the ones this process bound, whose binding the cache may not show yet), and of those
 * only the ones whose `attachedStorage` differs from what the object in the cache (its
 * newest state; none once deleted) gives them. So an attach
 * reaches its instance, a detach the instance it left, and a change that shows nowhere
 * (a condition, another instance's mount) reaches none.
 */
export function attachedStorageChanges(
  source: AttachedStorageSource,
  boundTo: (instanceId: string) => ObjectKey[] = () => [],
): MapToKeys {
  return (obj, cache) => {
    const namespace = obj.metadata?.namespace ?? "";
    const name = obj.metadata?.name ?? "";
    const current = cache.get(source.resource, keyOf(obj));
    return source.instanceIds(obj).flatMap((id) => {
      const wanted = current ? source.entries(current, id) : [];
      return boundInstances(cache, id, boundTo(id))
        .filter((c) => c.metadata?.namespace === namespace)
        .filter((c) => {
          const shown = (c.status?.attachedStorage ?? []).filter(
            (e) => e.kind === source.resource.kind && e.name === name,
          );
          return !isDeepStrictEqual(shown, wanted);
        })
        .map(keyOf);
    });
  };
}

/** The CciInstances the cache shows bound to `id`, and those of `bound` it does not show so yet. */
function boundInstances(cache: CacheReader, id: string, bound: ObjectKey[]): CciObject[] {
  const claimed = cache.byIndex<CciObject>(cciInstanceCrd, BOUND_ID_INDEX, id);
  const uids = new Set(claimed.map((c) => c.metadata?.uid));
  const late = bound
    .map((key) => cache.get<CciObject>(cciInstanceCrd, key))
    .filter((c): c is CciObject => c !== undefined && !uids.has(c.metadata?.uid));
  return late.length > 0 ? [...claimed, ...late] : claimed;
}
