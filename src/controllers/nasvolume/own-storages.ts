/**
 * The storages a namespace owns through its NasVolumes: what a raw `storageId` mount of
 * a TrainingJob or TrainingTemplate in that namespace may use without adoption rights
 * (managed/tenancy.ts).
 */
import { type NasVolume, nasVolumeCrd } from "../../crds/nasvolume.js";
import type { CacheReader } from "../../runtime/cache.js";
import { isConditionTrue } from "../../runtime/conditions.js";
import type { KubeObject } from "../../runtime/resource.js";

/**
 * The storage ids of the Ready NasVolumes of `namespace` (from the cache). Ready is
 * written by the NasVolume controller only after the binding passed its checks.
 */
export function ownStorageIds(cache: CacheReader, namespace: string): Set<string | undefined> {
  return new Set(
    cache
      .list<NasVolume & KubeObject>(nasVolumeCrd, namespace)
      .filter((n) => isConditionTrue(n.status?.conditions, "Ready"))
      .map((n) => n.status?.storageId),
  );
}
