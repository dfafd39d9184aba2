/**
 * The BlockVolume's remote resource behind the generic managed reconciler: a block
 * volume of the service. Creates it with the client token (and owner mark) in the
 * description, finds a lost create by the token through the volume list, attaches it
 * where the spec says and moves it (detach, then attach) when the spec changes, and
 * before a delete detaches it and waits until the service shows it detached. An
 * attachment made by someone else is reported and never detached (decisions.ts).
 */
import {
  BLOCK_VOLUME_REASONS,
  type BlockVolume as BlockVolumeObject,
} from "../../crds/blockvolume.js";
import { ServiceError, ServiceNotFoundError } from "../../service/errors.js";
import type { OperationCaller, BlockVolume as RemoteVolume } from "../../service/index.js";
import { BlockVolumeService, volumeListSnapshot } from "../../service/kinds/blockvolume.js";
import type { ListSnapshot } from "../../service/list-snapshot.js";
import type { ListedIds } from "../../service/pagination.js";
import { ownerMarkInDescription, withCreateMarkers } from "../../service/schemas/create.js";
import type {
  BeforeDeleteResult,
  CreateResult,
  DeleteResult,
  ListedObservation,
  ManagedCall,
  Observation,
  OwnerMark,
  ResolvedCall,
  SentCreate,
  UpdateResult,
} from "../managed/call.js";
import { listedObservation } from "../managed/call.js";
import { policiesOf } from "../managed/decisions.js";
import { absenceVerdict, type KindClient, type TokenAbsence } from "../managed/external-client.js";
import { sendOrFindMade } from "../managed/refused-change.js";
import { formatOwnerMark, ownerMark, parseOwnerMark } from "../managed/tenancy.js";
import {
  ATTACHMENT_ANNOTATION,
  type AttachmentAction,
  decideAttachment,
  decideDeleteAttachment,
  foreignMessage,
  volumeReady,
} from "./decisions.js";

/** What the reference step resolved: the instance spec.attachTo names, if any. */
export interface VolumeRefs {
  /** The instance id to attach to; undefined: detached. */
  instanceId: string | undefined;
}

/** A BlockVolume as the reconciler handles it. */
export type VolumeCall = ManagedCall<BlockVolumeObject, VolumeRefs>;

/**
 * Operations whose paths are assumptions and without which a volume could not be
 * observed or found again after a lost create answer: the detail and the list.
 */
export const VOLUME_ORDER_OPERATIONS = ["getVolume", "listVolumes"] as const;

/** The volume's name: spec.name, else metadata.name. */
export function volumeName(obj: BlockVolumeObject): string {
  return obj.spec.name ?? obj.metadata.name ?? "";
}

/** The instance this object attached its volume to (the annotation). */
export function ourAttachment(obj: BlockVolumeObject): string | undefined {
  return obj.metadata.annotations?.[ATTACHMENT_ANNOTATION] || undefined;
}

/**
 * Whether a volume record from the list carries what the status and the checks need:
 * the state, the size and the description (the owner mark). Where the list leaves one
 * out, the object's poll reads the detail. (A listed volume without an instance is
 * detached: the list has the detail's record, docs/service-assumptions.md §11b.)
 */
export function listRecordSuffices(volume: RemoteVolume): boolean {
  return (
    volume.status !== undefined && volume.sizeGB !== undefined && volume.description !== undefined
  );
}

/** The ExternalClient of BlockVolume. */
export class BlockVolumeExternalClient
  implements KindClient<BlockVolumeObject, RemoteVolume, VolumeRefs>
{
  private readonly volumes: BlockVolumeService;

  /**
   * `service`: the account's client for this reconcile; `volumes`: the account's volume
   * list snapshot, shared by every reconcile of its objects.
   */
  constructor(
    private readonly service: OperationCaller,
    volumes: ListSnapshot<RemoteVolume> = volumeListSnapshot(),
  ) {
    this.volumes = new BlockVolumeService(service, volumes);
  }

  requireOperations(): Promise<void> {
    return this.service.requireOperations(VOLUME_ORDER_OPERATIONS, "a volume create");
  }

  ownerOf(remote: RemoteVolume): OwnerMark | undefined {
    return parseOwnerMark(ownerMarkInDescription(remote.description));
  }

  async create(
    { obj }: ResolvedCall<BlockVolumeObject, VolumeRefs>,
    token: string,
  ): Promise<CreateResult> {
    const id = await this.volumes.createVolume({
      name: volumeName(obj),
      sizeGB: obj.spec.sizeGB,
      volumeType: obj.spec.volumeType,
      description: withCreateMarkers(
        obj.spec.description,
        token,
        formatOwnerMark(ownerMark(obj.metadata.namespace ?? "", obj.metadata.name ?? "")),
      ),
    });
    return { externalId: id };
  }

  lookupByToken({ obj }: VolumeCall, { token }: SentCreate): Promise<string[] | undefined> {
    return this.volumes.findVolumeIdsByClientToken(token, volumeName(obj));
  }

  async tokenAbsence(_call: VolumeCall, { token }: SentCreate): Promise<TokenAbsence> {
    return absenceVerdict(await this.volumes.provesVolumeTokenAbsent(token));
  }

  listIds(): Promise<ListedIds | undefined> {
    return this.volumes.listVolumeIds();
  }

  async observe(call: VolumeCall, id: string): Promise<Observation<RemoteVolume>> {
    let remote: RemoteVolume;
    try {
      remote = await this.volumes.getVolume(id);
    } catch (err) {
      if (err instanceof ServiceNotFoundError) return { exists: false };
      throw err;
    }
    return this.observation(call, remote);
  }

  /**
   * The routine poll of a settled volume from the shared walk of the volume list (one
   * per poll interval for every BlockVolume); undefined, for the detail read, when the
   * list is disabled or missing, does not list the volume or lacks a field, or the
   * volume needs attention (an attachment to make, a transition under way).
   */
  async observeFromList(
    call: VolumeCall,
    id: string,
    maxAgeMs: number,
  ): Promise<ListedObservation<RemoteVolume> | undefined> {
    const list = this.service.operationState("listVolumes");
    if (list === "disabled" || list === "missing") return undefined;
    const view = await this.volumes.listSnapshot(maxAgeMs);
    return listedObservation(view, id, (r) => this.observation(call, r), listRecordSuffices);
  }

  private observation(
    call: VolumeCall,
    remote: RemoteVolume,
  ): Observation<RemoteVolume> & { exists: true } {
    // Unresolved references: where the volume should be is not known; nothing to change.
    const desired = call.refs?.instanceId;
    const action = call.refs ? this.decide(call, remote) : { action: "InSync" as const };
    return {
      exists: true,
      upToDate: action.action === "InSync",
      differs: ["attachTo"],
      ready: volumeReady(remote, action, desired, policiesOf(call.obj).update),
      remote,
    };
  }

  async update(call: VolumeCall, id: string, remote: RemoteVolume): Promise<UpdateResult> {
    const action = this.decide(call, remote);
    const desired = call.refs?.instanceId;
    switch (action.action) {
      case "InSync":
        return { outcome: "Waiting", message: "nothing to change" };
      case "Wait":
        return { outcome: "Waiting", message: action.message };
      case "Foreign":
        return {
          outcome: "Refused",
          reason: BLOCK_VOLUME_REASONS.names.AttachedElsewhere,
          message: foreignMessage(id, action.instanceId, desired),
        };
      case "Record":
        await call.annotate({ [ATTACHMENT_ANNOTATION]: action.instanceId });
        return {
          outcome: "Applied",
          message: `volume ${id} is attached to instance ${action.instanceId} as spec.attachTo asks; recorded as this object's attachment`,
        };
      case "Forget":
        await call.annotate({ [ATTACHMENT_ANNOTATION]: null });
        return { outcome: "Applied", message: `volume ${id} is detached` };
      case "Attach": {
        // Recorded before the call: after a crash the attachment is known as ours.
        await call.annotate({ [ATTACHMENT_ANNOTATION]: action.instanceId });
        const to = action.instanceId;
        const r = await sendOrFindMade(
          () => this.volumes.attachVolume(id, to),
          async () => ((await this.volumes.getVolume(id)).instanceId === to ? to : undefined),
        );
        const by = "found" in r ? " (sent by an earlier call whose answer was lost)" : "";
        return { outcome: "Applied", message: `attaching volume ${id} to instance ${to}${by}` };
      }
      case "Detach":
        await this.detach(call, id, action.instanceId);
        return {
          outcome: "Applied",
          message:
            action.next === undefined
              ? `detaching volume ${id} from instance ${action.instanceId} (spec.attachTo removed)`
              : `detaching volume ${id} from instance ${action.instanceId} to attach it to ${action.next}`,
        };
    }
  }

  deleteConfigured(): boolean {
    return this.service.operationState("deleteVolume") !== "disabled";
  }

  /**
   * Before a delete: detaches the volume from this object's instance (the recorded
   * attachment, or the one the spec asks for) and waits until the service shows it
   * detached; a volume attached by someone else is waited on (and reported), never
   * detached.
   */
  async beforeDelete(call: VolumeCall, id: string): Promise<BeforeDeleteResult> {
    let remote: RemoteVolume;
    try {
      remote = await this.volumes.getVolume(id);
    } catch (err) {
      if (err instanceof ServiceNotFoundError) return "Done";
      throw err;
    }
    const action = decideDeleteAttachment({
      state: remote.status,
      attachedTo: remote.instanceId,
      ours: ourAttachment(call.obj),
      asked: call.refs?.instanceId ?? call.obj.spec.attachTo?.instanceId,
    });
    switch (action.action) {
      case "Detach":
        await this.detach(call, id, action.instanceId);
        return {
          waiting: `detaching volume ${id} from instance ${action.instanceId} before deleting it`,
        };
      case "Foreign":
        return {
          waiting: `${foreignMessage(id, action.instanceId)}; it is not deleted while attached. Detach it in the service, or set deletionPolicy Orphan`,
        };
      case "Wait":
        return { waiting: `${action.message}; deleting it once it is detached` };
      default:
        return "Done";
    }
  }

  async delete(_call: VolumeCall, id: string): Promise<DeleteResult> {
    if (this.service.operationState("deleteVolume") === "disabled") return "NotConfigured";
    await this.volumes.deleteVolume(id);
    // The service may show the volume (deleting) for a while: observed until gone.
    return "InProgress";
  }

  /**
   * Sends the detach of this object's attachment, then forgets it: the attachment is
   * recorded until the service accepted the detach, so a crash before leaves it ours.
   */
  private async detach(call: VolumeCall, id: string, instanceId: string): Promise<void> {
    try {
      await this.volumes.detachVolume(id, instanceId);
    } catch (err) {
      // Not attached any more (detached meanwhile): nothing of ours to detach.
      if (!(err instanceof ServiceError) || err.code !== 409) throw err;
    }
    await call.annotate({ [ATTACHMENT_ANNOTATION]: null });
  }

  private decide(call: VolumeCall, remote: RemoteVolume): AttachmentAction {
    return decideAttachment({
      desired: call.refs?.instanceId,
      state: remote.status,
      attachedTo: remote.instanceId,
      ours: ourAttachment(call.obj),
    });
  }
}
