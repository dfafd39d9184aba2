/**
 * Pure decisions of the FileSystem controller about mounts: which remote mounts are the
 * object's, which to make, which to remove, and how each shows in status. No I/O here;
 * filesystem/external.ts does the calls.
 *
 * A mount's identity is its instance (the service mounts a file system once per
 * instance, docs/service-assumptions.md): a remote mount on an instance of the spec is
 * the object's (so a mount whose create answer was lost is found, never made twice),
 * and so is one the status recorded (a mount removed from the spec). Every other
 * remote mount is someone else's: shown, never removed.
 */
import type { FileSystemMountStatus, MountState } from "../../crds/filesystem.js";
import { capAddress, capFreeText, capValue } from "../../runtime/object-writes.js";
import {
  type FileSystem,
  type FileSystemMount,
  type StorageStateClass,
  storageStateClass,
} from "../../service/index.js";

/** How many of the remote mounts that are not the object's the status names. */
export const MAX_OTHER_MOUNTS = 32;

/** A mount of the spec with its instance resolved. */
export interface DesiredMount {
  name: string;
  instanceId: string;
  mountPath?: string;
}

/** What the FileSystem's references resolve to: the spec's mounts with their instances. */
export interface FileSystemRefs {
  mounts: DesiredMount[];
}

/** A file system as observed, with the plan for its mounts. */
export interface FileSystemRemote {
  fs: FileSystem;
  plan: MountPlan;
}

/** What the mounts need. */
export interface MountPlan {
  /** Mounts to make now. */
  create: DesiredMount[];
  /** Remote mounts of the object to remove now. */
  remove: { name: string; mountId: string; instanceId?: string }[];
  /** Mounts of the object whose removal is under way or whose making is (nothing to send). */
  transitional: string[];
  /** Mounts removed from the spec that cannot be removed (no remove operation). */
  stuck: string[];
  /** A failed mount of the spec, if any. */
  failed: string[];
  /** The status entries, in spec order, then the ones being removed. */
  statuses: FileSystemMountStatus[];
  /** Remote mounts that are not the object's (the first {@link MAX_OTHER_MOUNTS}). */
  others: { mountId: string; instanceId?: string }[];
  /** Mounted mounts of the spec over all of them, e.g. `1/2`. */
  summary: string;
  /** The status entries of the spec's mounts not mounted as it asks (Ready waits for them). */
  unmounted: FileSystemMountStatus[];
}

/** What {@link planMounts} looks at. */
export interface MountPlanInput {
  /** The spec's mounts, resolved. */
  desired: readonly DesiredMount[];
  /** The file system as the service shows it. */
  remote: FileSystem;
  /** The mounts the status recorded (status.mounts). */
  recorded: readonly FileSystemMountStatus[];
  /** Whether a removal can be sent (deleteFileSystemMount enabled and not known missing). */
  removalPossible: boolean;
  /**
   * Whether spec.managementPolicies let the operator mount and remove (Update); without
   * it the plan is the same (it is the drift) but the status says nothing is sent.
   */
  updates?: boolean;
}

/** The status note of a change the policies keep the operator from sending. */
const NOT_SENT = "spec.managementPolicies has no Update, so it is not changed";

const MOUNT_STATE: Record<StorageStateClass, MountState> = {
  Ready: "Mounted",
  Creating: "Creating",
  Deleting: "Removing",
  Failed: "Failed",
  Unknown: "Unknown",
};

/** The status entry of remote mount `m` under the name `name`. */
function observed(name: string, m: FileSystemMount, state: MountState): FileSystemMountStatus {
  const out: FileSystemMountStatus = { name, state, mountId: m.id };
  if (m.instanceId !== undefined) out.instanceId = m.instanceId;
  if (m.address !== undefined) out.address = capAddress(m.address);
  if (m.mountPath !== undefined) out.mountPath = capAddress(m.mountPath);
  if (m.status !== undefined) out.remoteState = capValue(m.status);
  return out;
}

/** The plan for the mounts; see the module comment. */
export function planMounts(input: MountPlanInput): MountPlan {
  const plan: MountPlan = {
    create: [],
    remove: [],
    transitional: [],
    stuck: [],
    failed: [],
    statuses: [],
    others: [],
    summary: "",
    unmounted: [],
  };
  const fsReady = storageStateClass(input.remote.status) === "Ready";
  const remoteMounts = input.remote.mounts ?? [];
  const desiredByInstance = new Map(input.desired.map((d) => [d.instanceId, d]));
  const recordedById = new Map(
    input.recorded.filter((r) => r.mountId !== undefined).map((r) => [r.mountId, r]),
  );
  const updates = input.updates ?? true;
  const mounted = new Set<FileSystemMountStatus>();
  for (const d of input.desired) {
    const onInstance = remoteMounts.filter((m) => m.instanceId === d.instanceId);
    const going = onInstance.find((m) => storageStateClass(m.status) === "Deleting");
    const live = onInstance.find((m) => storageStateClass(m.status) !== "Deleting");
    if (
      live &&
      d.mountPath !== undefined &&
      live.mountPath !== undefined &&
      live.mountPath !== d.mountPath
    ) {
      plan.remove.push({ name: d.name, mountId: live.id, instanceId: d.instanceId });
      const again = updates
        ? `removed to be mounted again at ${d.mountPath}`
        : `spec asks for ${d.mountPath}; ${NOT_SENT}`;
      plan.statuses.push({
        ...observed(
          d.name,
          live,
          updates ? "Removing" : MOUNT_STATE[storageStateClass(live.status)],
        ),
        message: capFreeText(`mounted at ${live.mountPath}; ${again}`),
      });
      continue;
    }
    if (live) {
      const state = MOUNT_STATE[storageStateClass(live.status)];
      const entry = observed(d.name, live, state);
      if (state === "Mounted") mounted.add(entry);
      else if (state === "Creating") plan.transitional.push(d.name);
      else if (state === "Failed") plan.failed.push(d.name);
      plan.statuses.push(entry);
      continue;
    }
    const pending: FileSystemMountStatus = {
      name: d.name,
      state: "Pending",
      instanceId: d.instanceId,
    };
    if (d.mountPath !== undefined) pending.mountPath = d.mountPath;
    if (going) {
      plan.transitional.push(d.name);
      plan.statuses.push({
        ...pending,
        message: `waiting for the earlier mount ${going.id} on the instance to be removed`,
      });
    } else if (!fsReady) {
      plan.statuses.push({ ...pending, message: "waiting for the file system to be available" });
    } else {
      plan.create.push(d);
      plan.statuses.push(
        updates
          ? { ...pending, state: "Creating", message: "mounting" }
          : { ...pending, message: `not mounted; ${NOT_SENT}` },
      );
    }
  }
  // One entry per mount of the spec so far; the ones removed from it follow.
  plan.unmounted = plan.statuses.filter((s) => !mounted.has(s));
  for (const m of remoteMounts) {
    if (m.instanceId !== undefined && desiredByInstance.has(m.instanceId)) continue;
    const record = recordedById.get(m.id);
    if (!record) {
      if (plan.others.length >= MAX_OTHER_MOUNTS) continue;
      plan.others.push(
        m.instanceId === undefined
          ? { mountId: m.id }
          : { mountId: m.id, instanceId: m.instanceId },
      );
      continue;
    }
    if (storageStateClass(m.status) === "Deleting") {
      plan.transitional.push(record.name);
      plan.statuses.push(observed(record.name, m, "Removing"));
    } else if (input.removalPossible) {
      plan.remove.push({
        name: record.name,
        mountId: m.id,
        ...(m.instanceId !== undefined ? { instanceId: m.instanceId } : {}),
      });
      plan.statuses.push({
        ...observed(
          record.name,
          m,
          updates ? "Removing" : MOUNT_STATE[storageStateClass(m.status)],
        ),
        message: updates ? "removed from the spec" : `removed from the spec; ${NOT_SENT}`,
      });
    } else {
      plan.stuck.push(record.name);
      plan.statuses.push({
        ...observed(record.name, m, "RemovalNotPossible"),
        message:
          "removed from the spec, but the service has no operation to remove a mount (deleteFileSystemMount); it stays",
      });
    }
  }
  plan.summary = `${mounted.size}/${input.desired.length}`;
  return plan;
}

/** Whether the plan asks for nothing: no call to make and nothing under way. */
export function mountsSettled(plan: MountPlan): boolean {
  return (
    plan.create.length === 0 &&
    plan.remove.length === 0 &&
    plan.transitional.length === 0 &&
    plan.stuck.length === 0
  );
}
