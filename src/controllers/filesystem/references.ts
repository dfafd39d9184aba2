/**
 * Resolving a FileSystem's mount targets: each `mounts[].target.cciInstanceRef` to the
 * CciInstance's instance id (once it has one), a raw `instanceId` as it is where a
 * CciInstance of the namespace is bound to it or the namespace may adopt (as a raw
 * `storageId` mount of a TrainingJob, managed/tenancy.ts). Pure: the loop passes a
 * reader of the object's namespace (managed/external-client.ts).
 */
import { type CciInstance, cciInstanceCrd } from "../../crds/cciinstance.js";
import { FILE_SYSTEM_REASONS, type FileSystem as FileSystemObject } from "../../crds/filesystem.js";
import type { ReferenceReader, ReferenceResolution } from "../managed/call.js";
import { adoptionRefusal, mayAdopt } from "../managed/tenancy.js";
import { stalledNote } from "../referenced-state.js";
import type { DesiredMount, FileSystemRefs } from "./mounts.js";

const R = FILE_SYSTEM_REASONS.names;

/**
 * The resolution of the mount targets under `adoption.namespaces` (`adoptionNamespaces`):
 * the spec's mounts with their instances, or why the object waits or is refused.
 */
export function mountTargetResolver(adoptionNamespaces: readonly string[]) {
  return (obj: FileSystemObject, read: ReferenceReader): ReferenceResolution<FileSystemRefs> => {
    const resolution = resolveMountTargets(obj, read);
    if (!resolution.resolved) return resolution;
    const namespace = obj.metadata.namespace ?? "";
    if (mayAdopt(adoptionNamespaces, namespace)) return resolution;
    const own = new Set(read.list<CciInstance>(cciInstanceCrd).map((c) => c.status?.instanceId));
    const raw = (obj.spec.mounts ?? [])
      .map((m) => m.target.instanceId)
      .filter((id): id is string => id !== undefined && !own.has(id));
    if (raw.length === 0) return resolution;
    const refusal = adoptionRefusal(
      namespace,
      `mounts[].target.instanceId ${raw.join(", ")} (no CciInstance of the namespace is bound to it)`,
    );
    return { resolved: false, ...refusal };
  };
}

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
          reason: R.MountTargetNotFound,
          message: `mounts[${m.name}].target.cciInstanceRef: CciInstance ${ref} does not exist`,
        };
      }
      instanceId = cci.status?.instanceId;
      if (instanceId === undefined) {
        return {
          resolved: false,
          reason: R.MountTargetNotBound,
          message: `mounts[${m.name}].target.cciInstanceRef: CciInstance ${ref} has no instance id yet${stalledNote(cci)}`,
        };
      }
    }
    if (instanceId === undefined) continue;
    const other = byInstance.get(instanceId);
    if (other !== undefined) {
      return {
        resolved: false,
        reason: R.MountTargetsCollide,
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
