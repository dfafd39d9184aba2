/**
 * The storages a namespace owns through its NasVolumes: what a raw `storageId` mount of
 * a TrainingJob or TrainingTemplate in that namespace may use without adoption rights
 * (managed/tenancy.ts). Read by those kinds' reference resolution.
 */
import { type NasVolume, nasVolumeCrd } from "../../crds/nasvolume.js";
import { isConditionTrue } from "../../runtime/object-writes.js";
import type { ReferenceReader } from "../managed/call.js";

/**
 * The storage ids of the Ready NasVolumes of the namespace `read` reads (from the
 * cache), listed at the first call and kept for the reconcile: only a raw mount asks,
 * and a namespace may hold thousands of NasVolumes. Ready is written by the NasVolume
 * controller only after the binding passed its checks.
 */
export function ownStorageIds(read: ReferenceReader): () => ReadonlySet<string | undefined> {
  let ids: ReadonlySet<string | undefined> | undefined;
  return () => {
    ids ??= new Set(
      read
        .list<NasVolume>(nasVolumeCrd)
        .filter((n) => isConditionTrue(n.status?.conditions, "Ready"))
        .map((n) => n.status?.storageId),
    );
    return ids;
  };
}
