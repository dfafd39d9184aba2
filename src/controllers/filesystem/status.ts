/**
 * The FileSystem's Ready condition and status from the remote file system and the plan
 * for its mounts (mounts.ts). Pure.
 */
import {
  FILE_SYSTEM_REASONS,
  type FileSystem as FileSystemObject,
  type FileSystemPhase,
  type FileSystemStatus,
} from "../../crds/filesystem.js";
import { capFreeText, capValue } from "../../runtime/object-writes.js";
import { type FileSystem, storageStateClass, stripClientTokenMarker } from "../../service/index.js";
import type { ManagedFacts, ReadyState } from "../managed/call.js";
import { exportData } from "../managed/export.js";
import type { FileSystemRemote, MountPlan } from "./mounts.js";

const R = FILE_SYSTEM_REASONS.names;

/** The Ready condition: the file system available and every mount of the spec mounted. */
export function fileSystemReady(fs: FileSystem, plan: MountPlan): ReadyState {
  const word = fs.status ?? "an unreported state";
  switch (storageStateClass(fs.status)) {
    case "Creating":
      return { status: "False", reason: "Creating", message: `the file system is ${word}` };
    case "Failed":
      return {
        status: "False",
        reason: R.FileSystemFailed,
        message: `the file system is ${word}`,
      };
    case "Deleting":
    case "Unknown":
      return {
        status: "False",
        reason: R.FileSystemUnavailable,
        message: `the file system is ${word}`,
      };
    case "Ready":
      break;
  }
  if (plan.failed.length > 0) {
    return {
      status: "False",
      reason: R.FileSystemFailed,
      message: `mount(s) ${plan.failed.join(", ")} failed in the service (status.mounts)`,
    };
  }
  const notMounted = plan.unmounted;
  if (notMounted.length > 0) {
    return {
      status: "False",
      reason: R.MountsPending,
      message: `mounts not mounted yet: ${notMounted.map((m) => `${m.name} (${m.state}${m.message ? `: ${m.message}` : ""})`).join(", ")}`,
    };
  }
  return { status: "True", reason: "Available", message: "" };
}

/** The phase for what is known. */
export function fileSystemPhase(
  bound: boolean,
  remote: FileSystemRemote | undefined,
  previous: FileSystemPhase | undefined,
): FileSystemPhase {
  if (!bound) return "Pending";
  if (!remote) return previous ?? "Pending";
  switch (storageStateClass(remote.fs.status)) {
    case "Creating":
      return "Creating";
    case "Deleting":
      return "Deleting";
    case "Failed":
      return "Failed";
    case "Unknown":
      return "Unknown";
    case "Ready":
      return remote.plan.unmounted.length === 0 ? "Ready" : "Mounting";
  }
}

/** The status fields of a FileSystem that come from the facts (managed/reconciler.ts keeps the rest). */
export const FILE_SYSTEM_FACT_FIELDS = ["fileSystemId", "phase"] as const;

/**
 * The FileSystem status (without conditions); without a remote record, only
 * {@link FILE_SYSTEM_FACT_FIELDS} (the loop keeps the previous remote fields).
 */
export function fileSystemStatus(
  obj: FileSystemObject,
  facts: ManagedFacts,
  remote: FileSystemRemote | undefined,
): FileSystemStatus {
  const prev = obj.status ?? {};
  const out: FileSystemStatus = {};
  if (remote) {
    const { fs, plan } = remote;
    if (fs.status !== undefined) out.remoteState = capValue(fs.status);
    if (fs.name !== undefined) out.name = capValue(fs.name);
    if (fs.sizeGB !== undefined) out.sizeGB = fs.sizeGB;
    if (fs.type !== undefined) out.type = capValue(fs.type);
    if (fs.protocol !== undefined) out.protocol = capValue(fs.protocol);
    if (fs.createdTime !== undefined) out.createdTime = capValue(fs.createdTime);
    if (fs.aidcId !== undefined) out.aidcId = fs.aidcId;
    const description = stripClientTokenMarker(fs.description ?? "");
    if (description !== "") out.description = capFreeText(description);
    out.mounts = plan.statuses;
    out.mountsReady = plan.summary;
    if (plan.others.length > 0) out.otherMounts = plan.others;
  }
  if (facts.externalId !== undefined) out.fileSystemId = facts.externalId;
  out.phase = fileSystemPhase(facts.externalId !== undefined, remote, prev.phase);
  return out;
}

/**
 * The connection details of `spec.exportTo`: FILE_SYSTEM_ID, PROTOCOL and, per mount
 * with an address, MOUNT_<name>_ADDRESS (its export path).
 */
export function fileSystemExport(status: Record<string, unknown>): Record<string, string> {
  const s = status as FileSystemStatus;
  const mounts = Object.fromEntries(
    (s.mounts ?? []).filter((m) => m.address).map((m) => [`MOUNT_${m.name}_ADDRESS`, m.address]),
  );
  return exportData({ FILE_SYSTEM_ID: s.fileSystemId, PROTOCOL: s.protocol, ...mounts });
}
