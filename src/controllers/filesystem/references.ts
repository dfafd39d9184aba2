/**
 * Resolving a FileSystem's mount targets: each `mounts[].target.cciInstanceRef` to the
 * CciInstance's instance id (once it has one), a raw `instanceId` as it is. Pure: the
 * loop passes a reader of the object's namespace (managed/external-client.ts).
 */
import { type CciInstance, cciInstanceCrd } from "../../crds/cciinstance.js";
import { type FileSystem as FileSystemObject, FS_REASON } from "../../crds/filesystem.js";
import type { ReferenceReader, ReferenceResolution } from "../managed/external-client.js";
import type { DesiredMount, FileSystemRefs } from "./mounts.js";

/** The spec's mounts with their instances, or why the object waits. */
export function resolveMountTargets(
  obj: FileSystemObject,
  read: ReferenceReader,
): ReferenceResolution<FileSystemRefs> {
  const mounts: DesiredMount[] = [];
  const byInstance = new Map<string, string>();
  for (const m of obj.spec.mounts ?? []) {
    let instanceId = m.target.instanceId;
    const ref = m.target.cciInstanceRef?.name;
    if (ref !== undefined) {
      const cci = read.get<CciInstance>(cciInstanceCrd, ref);
      if (!cci) {
        return {
          resolved: false,
          reason: FS_REASON.MountTargetNotFound,
          message: `mounts[${m.name}].target.cciInstanceRef: CciInstance ${ref} does not exist`,
        };
      }
      instanceId = cci.status?.instanceId;
      if (instanceId === undefined) {
        return {
          resolved: false,
          reason: FS_REASON.MountTargetNotBound,
          message: `mounts[${m.name}].target.cciInstanceRef: CciInstance ${ref} has no instance id yet`,
        };
      }
    }
    if (instanceId === undefined) continue;
    const other = byInstance.get(instanceId);
    if (other !== undefined) {
      return {
        resolved: false,
        reason: FS_REASON.MountTargetsCollide,
        message: `mounts[${other}] and mounts[${m.name}] both name instance ${instanceId}; a file system is mounted once per instance`,
      };
    }
    byInstance.set(instanceId, m.name);
    mounts.push({
      name: m.name,
      instanceId,
      ...(m.mountPath !== undefined ? { mountPath: m.mountPath } : {}),
    });
  }
  return { resolved: true, refs: { mounts } };
}
