/**
 * The BlockVolume kind's service operations: the four the spec shows ("Block storage:
 * POST /v1/volumes (create), POST /v1/volumes/{id}/attach (attach to an instance), POST
 * /v1/volumes/{id}/detach (detach), DELETE /v1/volumes/{id}") and the assumed detail and
 * list, with the payloads this project assumes (docs/service-assumptions.md §11b): the
 * request bodies here (the client checks what it sends with them, the emulator what it
 * receives), the volume record in schemas/block-volumes.ts. `endpoints` joins the
 * endpoint table (generated kinds/index.ts); {@link BlockVolumeService} calls them
 * through any {@link OperationCaller} (an account's calls, `AccountCalls`).
 */
import { z } from "zod";
import { assumed, documented, type EndpointDeclarations } from "../endpoint-definition.js";
import { ListSnapshot, type ListSnapshotView } from "../list-snapshot.js";
import type { OperationCaller } from "../operation-caller.js";
import {
  idsCarryingToken,
  type ListedIds,
  listIdentities,
  type PageWalkEnd,
  paginate,
  walkProvesTokenAbsent,
} from "../pagination.js";
import {
  type BlockVolume,
  blockVolumeSchema,
  createdVolumeSchema,
} from "../schemas/block-volumes.js";
import { type Page, pageOf } from "../schemas/data.js";
import { requiredString } from "../schemas/primitives.js";

/** The block volume operations of the endpoint table. */
export const endpoints = {
  createVolume: documented("POST", "/v1/volumes", false),
  attachVolume: documented("POST", "/v1/volumes/{id}/attach", false),
  detachVolume: documented("POST", "/v1/volumes/{id}/detach", false),
  deleteVolume: documented("DELETE", "/v1/volumes/{id}", true),
  getVolume: assumed("GET", "/v1/volumes/{id}", true),
  listVolumes: assumed("GET", "/v1/volumes", true),
} as const satisfies EndpointDeclarations;

/** Body of POST /v1/volumes (assumed). */
export const createVolumeBodySchema = z.object({
  /** Name of the volume. */
  name: z.string().min(1),
  /** Size in whole GB. */
  sizeGB: z.int().min(1),
  /** The volume type (the spec names none; passed as given). */
  volumeType: z.string().min(1),
  /** Free text; carries the client token and owner markers. */
  description: z.string().optional(),
});

/** A create request. */
export type CreateVolumeRequest = z.infer<typeof createVolumeBodySchema>;

/** Body of POST /v1/volumes/{id}/attach (assumed): the instance to attach to. */
export const attachVolumeBodySchema = z.object({ instanceId: requiredString });

/**
 * Body of POST /v1/volumes/{id}/detach (assumed): the instance it is detached from,
 * which the service checks against the attachment when given.
 */
export const detachVolumeBodySchema = z.object({ instanceId: z.string().min(1).optional() });

/** Query of the volume list (assumed, like the CCI list). */
export interface VolumeListQuery {
  pageNo?: number;
  pageSize?: number;
  /** Fuzzy match on the name. */
  name?: string;
  status?: string;
  /** Volumes attached to this instance. */
  instanceId?: string;
}

/** Data of operations whose answer is not read. */
const ignored = z.unknown().transform((): void => undefined);

/**
 * A snapshot of one account's volume list, for {@link BlockVolumeService}; `now` is its
 * clock (ms since the epoch).
 */
export function volumeListSnapshot(now: () => number = Date.now): ListSnapshot<BlockVolume> {
  return new ListSnapshot<BlockVolume>((v) => v.id, now);
}

/** Block volumes: create, attach, detach, delete, and the assumed detail and list. */
export class BlockVolumeService {
  /**
   * `snapshot`: the volume list of the caller's account, walked at most once per asked
   * age for every BlockVolume of that account (`listSnapshot`); the account's every
   * service (one per reconcile) shares it, and each account has its own.
   */
  constructor(
    private readonly caller: OperationCaller,
    private readonly snapshot: ListSnapshot<BlockVolume> = volumeListSnapshot(),
  ) {}

  /** A walk of the volume list through this service's caller. */
  private readonly walk = () => this.iterateVolumes();

  /**
   * The whole volume list by id, walked anew when the last walk is `maxAgeMs` old or
   * more and shared by every caller of this service (list-snapshot.ts); undefined when
   * the walk failed (a disabled list fails without a request).
   */
  listSnapshot(maxAgeMs: number): Promise<ListSnapshotView<BlockVolume> | undefined> {
    return this.snapshot.read(maxAgeMs, this.walk);
  }

  /** `send()`, then the list snapshot dropped: a walk before the change would not show it. */
  private async changing<T>(send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } finally {
      this.snapshot.invalidate();
    }
  }

  /**
   * Creates a block volume (never retried blindly); returns the new volume's id (the
   * answer may carry the whole volume or only its id).
   */
  async createVolume(req: CreateVolumeRequest): Promise<string> {
    const body = this.caller.checkedBody("createVolume", createVolumeBodySchema, req);
    return (await this.caller.request("createVolume", { body }, createdVolumeSchema)).id;
  }

  /** Attaches volume `id` to instance `instanceId` (never retried blindly; the answer is not read). */
  async attachVolume(id: string, instanceId: string): Promise<void> {
    const body = this.caller.checkedBody("attachVolume", attachVolumeBodySchema, { instanceId });
    return this.changing(() =>
      this.caller.request("attachVolume", { params: { id }, body }, ignored),
    );
  }

  /**
   * Detaches volume `id` (never retried blindly). `instanceId`, when given, is the
   * instance it is detached from: a service that checks it refuses the detach of a
   * volume attached elsewhere.
   */
  async detachVolume(id: string, instanceId?: string): Promise<void> {
    const body = this.caller.checkedBody(
      "detachVolume",
      detachVolumeBodySchema,
      instanceId === undefined ? {} : { instanceId },
    );
    return this.changing(() =>
      this.caller.request("detachVolume", { params: { id }, body }, ignored),
    );
  }

  /** Deletes volume `id`; the service refuses an attached one. */
  async deleteVolume(id: string): Promise<void> {
    return this.changing(() => this.caller.request("deleteVolume", { params: { id } }, ignored));
  }

  /** One volume (assumed endpoint); `ServiceNotFoundError` when it does not exist. */
  async getVolume(id: string): Promise<BlockVolume> {
    return this.caller.request("getVolume", { params: { id } }, blockVolumeSchema);
  }

  /** One page of the volume list (assumed endpoint). */
  async listVolumes(query: VolumeListQuery = {}): Promise<Page<BlockVolume>> {
    return this.caller.request("listVolumes", { query: { ...query } }, pageOf(blockVolumeSchema));
  }

  /** Every volume matching `query`, page by page (the walk returns whether it was complete). */
  iterateVolumes(
    query: Omit<VolumeListQuery, "pageNo"> = {},
  ): AsyncGenerator<BlockVolume, PageWalkEnd, undefined> {
    return paginate(
      (pageNo, pageSize) => this.listVolumes({ ...query, pageNo, pageSize }),
      (v) => v.id,
      query.pageSize,
    );
  }

  /**
   * The ids of every volume, from a walk of the whole list, and whether the walk was
   * complete; undefined when the volume list is disabled.
   */
  async listVolumeIds(): Promise<ListedIds | undefined> {
    if (this.caller.operationState("listVolumes") === "disabled") return undefined;
    return listIdentities(this.iterateVolumes(), (v) => v.id);
  }

  /**
   * Whether one walk of the whole volume list, started now, proves that no volume
   * carries `token` (`walkProvesTokenAbsent`); undefined when the list is disabled.
   */
  async provesVolumeTokenAbsent(token: string): Promise<boolean | undefined> {
    if (this.caller.operationState("listVolumes") === "disabled") return undefined;
    return walkProvesTokenAbsent(this.iterateVolumes(), token);
  }

  /**
   * Ids of the volumes whose description carries the marker of `token`, or undefined
   * when the volume list is disabled. `name` narrows the list first.
   */
  async findVolumeIdsByClientToken(token: string, name?: string): Promise<string[] | undefined> {
    if (this.caller.operationState("listVolumes") === "disabled") return undefined;
    return idsCarryingToken(
      this.iterateVolumes(name === undefined ? {} : { name }),
      token,
      (v) => v.id,
    );
  }
}
