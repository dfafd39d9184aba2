/**
 * The FileSystem's remote resource behind the generic managed reconciler: a file system
 * of the service and its mounts. Creates with the client token in the description,
 * finds a lost create by the token through the file system list, makes and removes
 * mounts from the spec (mounts.ts decides), and before a Delete removes the object's
 * mounts and waits until they are gone (the service deletes no file system with
 * mounts). A remove the service cannot do is reported, never faked.
 */
import { FILE_SYSTEM_REASONS, type FileSystem as FileSystemObject } from "../../crds/filesystem.js";
import {
  EndpointDisabledError,
  type FileSystem,
  FileSystemOperations,
  type OperationCaller,
  ownerMarkInDescription,
  ServiceNotFoundError,
  ServiceOperationMissingError,
  storageStateClass,
  withCreateMarkers,
} from "../../service/index.js";
import type { ListedIds } from "../../service/pagination.js";
import { terminalError } from "../event-reasons.js";
import type {
  BeforeDeleteResult,
  CreateResult,
  DeleteResult,
  ManagedCall,
  Observation,
  OwnerMark,
  ReadyState,
  SentCreate,
  UpdateResult,
} from "../managed/call.js";
import { policiesOf } from "../managed/decisions.js";
import { absenceVerdict, type KindClient, type TokenAbsence } from "../managed/external-client.js";
import { sendOrFindMade } from "../managed/refused-change.js";
import { formatOwnerMark, ownerMark, parseOwnerMark } from "../managed/tenancy.js";
import {
  type DesiredMount,
  type FileSystemRefs,
  type FileSystemRemote,
  type MountPlan,
  mountsSettled,
  planMounts,
} from "./mounts.js";
import { fileSystemReady } from "./status.js";

const R = FILE_SYSTEM_REASONS.names;

/** Operations a file system create needs to finish and be observed: the detail and the list. */
export const FILE_SYSTEM_ORDER_OPERATIONS = ["getFileSystem", "listFileSystems"] as const;

/** The file system's name in the service: spec.name, else metadata.name. */
export function fileSystemName(obj: FileSystemObject): string {
  return obj.spec.name ?? obj.metadata.name ?? "";
}

/** A "cannot remove" refusal of a mount: the operation is disabled or missing. */
function removalUnavailable(err: unknown): boolean {
  return err instanceof EndpointDisabledError || err instanceof ServiceOperationMissingError;
}

/** The ExternalClient of FileSystem. */
export class FileSystemExternalClient
  implements KindClient<FileSystemObject, FileSystemRemote, FileSystemRefs>
{
  private readonly fileSystems: FileSystemOperations;

  constructor(private readonly service: OperationCaller) {
    this.fileSystems = new FileSystemOperations(service);
  }

  requireOperations(): Promise<void> {
    return this.service.requireOperations(FILE_SYSTEM_ORDER_OPERATIONS, "a file system create");
  }

  ownerOf(remote: FileSystemRemote): OwnerMark | undefined {
    return parseOwnerMark(ownerMarkInDescription(remote.fs.description));
  }

  async create({ obj }: ManagedCall<FileSystemObject>, token: string): Promise<CreateResult> {
    const { spec } = obj;
    const { id } = await this.fileSystems.create({
      name: fileSystemName(obj),
      sizeGB: spec.sizeGB,
      description: withCreateMarkers(
        spec.description,
        token,
        formatOwnerMark(ownerMark(obj.metadata.namespace ?? "", obj.metadata.name ?? "")),
      ),
      ...(spec.type !== undefined ? { type: spec.type } : {}),
      ...(spec.protocol !== undefined ? { protocol: spec.protocol } : {}),
      ...(spec.aidcId !== undefined ? { aidcId: spec.aidcId } : {}),
    });
    return id === undefined ? {} : { externalId: id };
  }

  lookupByToken(
    { obj }: ManagedCall<FileSystemObject>,
    { token }: SentCreate,
  ): Promise<string[] | undefined> {
    return this.fileSystems.findIdsByClientToken(token, fileSystemName(obj));
  }

  async tokenAbsence(
    _call: ManagedCall<FileSystemObject>,
    { token }: SentCreate,
  ): Promise<TokenAbsence> {
    return absenceVerdict(await this.fileSystems.provesTokenAbsent(token));
  }

  listIds(): Promise<ListedIds | undefined> {
    return this.fileSystems.listIds();
  }

  async observe(
    call: ManagedCall<FileSystemObject, FileSystemRefs>,
    id: string,
  ): Promise<Observation<FileSystemRemote>> {
    let fs: FileSystem;
    try {
      fs = await this.fileSystems.get(id);
    } catch (err) {
      if (err instanceof ServiceNotFoundError) return { exists: false };
      throw err;
    }
    const plan = this.plan(call, fs);
    const ready: ReadyState = fileSystemReady(fs, plan);
    const upToDate = mountsSettled(plan);
    return { exists: true, upToDate, differs: ["mounts"], ready, remote: { fs, plan } };
  }

  async update(
    _call: ManagedCall<FileSystemObject, FileSystemRefs>,
    id: string,
    remote: FileSystemRemote,
  ): Promise<UpdateResult> {
    const { plan } = remote;
    const done: string[] = [];
    for (const r of plan.remove) {
      try {
        await this.fileSystems.unmount(id, r.mountId);
      } catch (err) {
        if (!removalUnavailable(err)) throw err;
        // Shown in the status written with this refusal (the plan is the observed remote's).
        for (const m of plan.statuses) {
          if (m.mountId !== r.mountId) continue;
          m.state = "RemovalNotPossible";
          m.message =
            "the service has no operation to remove a mount (deleteFileSystemMount); it stays";
        }
        return {
          outcome: "Refused",
          reason: R.MountRemovalUnavailable,
          message: `cannot remove mount ${r.name} (${r.mountId}): ${(err as Error).message}`,
        };
      }
      done.push(`removing mount ${r.name} (${r.mountId})`);
    }
    for (const d of plan.create) done.push(await this.mount(id, d));
    if (done.length > 0) return { outcome: "Applied", message: done.join("; ") };
    if (plan.stuck.length > 0) {
      return {
        outcome: "Refused",
        reason: R.MountRemovalUnavailable,
        message: `mount(s) ${plan.stuck.join(", ")} were removed from the spec, but the service has no operation to remove a mount (deleteFileSystemMount is disabled or answers a bare 404); they stay. Configure service.endpoints.deleteFileSystemMount, remove them in the service, or put them back in the spec`,
      };
    }
    return {
      outcome: "Waiting",
      message: `waiting for mount(s) ${plan.transitional.join(", ")} to finish`,
    };
  }

  /** Mounts `d`, or finds the mount an earlier call made (refused-change.ts). */
  private async mount(id: string, d: DesiredMount): Promise<string> {
    const on = `${d.name} on instance ${d.instanceId}`;
    const r = await sendOrFindMade(
      () =>
        this.fileSystems.mount(id, {
          instanceId: d.instanceId,
          ...(d.mountPath !== undefined ? { mountPath: d.mountPath } : {}),
        }),
      async () =>
        (await this.fileSystems.get(id)).mounts?.find((m) => m.instanceId === d.instanceId)?.id,
    );
    if ("found" in r)
      return `found mount ${r.found} of ${on}, made by an earlier call whose answer was lost`;
    return `mounting ${on}${r.sent.id ? ` (${r.sent.id})` : ""}`;
  }

  /**
   * Before a Delete: removes the object's mounts (never another's: those refuse the
   * delete), and waits until the service shows none. The object's are those of the
   * plan's rule (mounts.ts): on an instance of the spec, so a mount whose answer was
   * lost counts too, or recorded in the status (by id or instance).
   */
  async beforeDelete(
    call: ManagedCall<FileSystemObject, FileSystemRefs>,
    id: string,
  ): Promise<BeforeDeleteResult> {
    let fs: FileSystem;
    try {
      fs = await this.fileSystems.get(id);
    } catch (err) {
      if (err instanceof ServiceNotFoundError) return "Done";
      throw err;
    }
    const mounts = fs.mounts ?? [];
    if (mounts.length === 0) return "Done";
    const recorded = new Set((call.obj.status?.mounts ?? []).map((m) => m.mountId));
    const instances = new Set([
      ...(call.obj.status?.mounts ?? []).map((m) => m.instanceId),
      ...desiredMounts(call).map((d) => d.instanceId),
    ]);
    const own = mounts.filter((m) => recorded.has(m.id) || instances.has(m.instanceId));
    const others = mounts.filter((m) => !own.includes(m));
    if (others.length > 0) {
      throw terminalError(
        R.OtherMountsBlockDelete,
        `file system ${id} has mounts this object did not make (${others.map((m) => `${m.id} on ${m.instanceId ?? "an unknown instance"}`).join(", ")}); the service deletes no file system with mounts and the operator removes no mount it did not make. Remove them in the service, or set deletionPolicy Orphan`,
      );
    }
    for (const m of own) {
      if (storageStateClass(m.status) === "Deleting") continue;
      try {
        await this.fileSystems.unmount(id, m.id);
      } catch (err) {
        if (err instanceof ServiceNotFoundError) continue;
        if (!removalUnavailable(err)) throw err;
        throw terminalError(
          R.MountRemovalUnavailable,
          `cannot delete file system ${id}: its mount ${m.id} must be removed first, and the service has no operation to remove a mount (${(err as Error).message}). Configure service.endpoints.deleteFileSystemMount, remove the mount in the service, or set deletionPolicy Orphan`,
          { cause: err },
        );
      }
    }
    return {
      waiting: `removing the mounts ${own.map((m) => m.id).join(", ")} before deleting the file system ${id}`,
    };
  }

  deleteConfigured(): boolean {
    return this.service.operationState("deleteFileSystem") !== "disabled";
  }

  async delete(_call: ManagedCall<FileSystemObject>, id: string): Promise<DeleteResult> {
    if (this.service.operationState("deleteFileSystem") === "disabled") return "NotConfigured";
    await this.fileSystems.delete(id);
    // The service may show the file system (deleting) for a while: observed until gone.
    return "InProgress";
  }

  /** The mount plan for `fs`: the spec's mounts (when resolved) against the remote ones. */
  private plan(call: ManagedCall<FileSystemObject, FileSystemRefs>, fs: FileSystem): MountPlan {
    const removal = this.service.operationState("deleteFileSystemMount");
    const removalPossible = removal !== "disabled" && removal !== "missing";
    return planMounts({
      desired: desiredMounts(call),
      remote: fs,
      recorded: call.obj.status?.mounts ?? [],
      removalPossible,
      updates: policiesOf(call.obj).update,
    });
  }
}

/** The spec's mounts with their instances: as resolved, else as {@link recordedAsDesired}. */
function desiredMounts(call: ManagedCall<FileSystemObject, FileSystemRefs>): DesiredMount[] {
  return call.refs?.mounts ?? recordedAsDesired(call.obj);
}

/**
 * Where the references do not resolve now (the loop changes nothing then), the mounts
 * are shown as the spec names them with the instances the status recorded.
 */
function recordedAsDesired(obj: FileSystemObject): DesiredMount[] {
  const recorded = new Map((obj.status?.mounts ?? []).map((m) => [m.name, m.instanceId]));
  const out: DesiredMount[] = [];
  for (const m of obj.spec.mounts ?? []) {
    const instanceId = m.target.instanceId ?? recorded.get(m.name);
    if (instanceId === undefined) continue;
    out.push({
      name: m.name,
      instanceId,
      ...(m.mountPath !== undefined ? { mountPath: m.mountPath } : {}),
    });
  }
  return out;
}
