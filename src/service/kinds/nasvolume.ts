/**
 * The NasVolume kind's service operations: the NAS catalog and availability, the
 * subscription (an asynchronous create) and its result, scale and mount path, and the
 * list, detail and delete this project assumes (docs/service-assumptions.md). The body
 * schemas are the wire as the spec states it (the emulator checks with them too); the
 * records the service answers are in schemas/nas.ts.
 */
import { z } from "zod";
import { assumed, documented, type EndpointDeclarations } from "../endpoint-definition.js";
import { KindList } from "../kind-list.js";
import type { ListSnapshotView } from "../list-snapshot.js";
import type { OperationsContext } from "../operation-caller.js";
import {
  idsCarryingToken,
  type ListedIds,
  type PageWalkEnd,
  walkProvesTokenAbsent,
} from "../pagination.js";
import type { SubscriptionResult } from "../schemas/create.js";
import { emptyData, listOf, type Page } from "../schemas/data.js";
import { SCALE_TYPES, type ScaleType } from "../schemas/enums.js";
import {
  type NasInstance,
  type NasProduct,
  nasAvailabilitySchema,
  nasInstanceSchema,
  nasProductSchema,
} from "../schemas/nas.js";
import { lenientEnum } from "../schemas/primitives.js";

/** The NAS operations of the endpoint table; the delete is off until a path is configured. */
export const endpoints = {
  listNasProducts: documented("GET", "/v1/product/list-for-nas-storage", true),
  isNasProductAvailable: documented("POST", "/v1/product/nas-storage-available", true),
  subscribeNas: documented("POST", "/v1/subscription/nasStorage/create", false),
  scaleNas: documented("POST", "/v1/nasStorage/instance/{id}/scale", false),
  updateNasMountPath: documented("PUT", "/v1/nasStorage/instance/{id}/mountPath", true),
  getNasSubscriptionResult: assumed("GET", "/v1/subscription/nasStorage/result/{key}", true),
  listNas: assumed("GET", "/v1/nasStorage/instance/list", true),
  getNas: assumed("GET", "/v1/nasStorage/instance/{id}/detail", true),
  deleteNas: assumed("DELETE", "/v1/nasStorage/instance/{id}", true, false),
} as const satisfies EndpointDeclarations;

/** Body of POST /v1/subscription/nasStorage/create on the wire. */
export const subscribeNasBodySchema = z.object({
  productCode: z.string().min(1),
  storageParams: z
    .object({
      name: z.string().optional(),
      description: z.string().optional(),
      storageCapacity: z
        .string()
        .regex(/^\d+$/, "storageCapacity must be a whole number of GB written as a string")
        .optional(),
      mountPath: z.string().optional(),
    })
    .optional(),
});

export type SubscribeNasBody = z.infer<typeof subscribeNasBodySchema>;

/** A NAS subscription as callers give it: `storageCapacity` (GB) may be a number. */
export interface SubscribeNasRequest {
  productCode: string;
  storageParams?: {
    /** Directory name, the identifier of the storage. */
    name?: string;
    /** Free text; carries the client token (schemas/create.ts). */
    description?: string;
    storageCapacity?: number | string;
    mountPath?: string;
  };
}

/** A subscription request's wire body (capacity as a string). */
export function toSubscribeNasBody(req: SubscribeNasRequest): SubscribeNasBody {
  const body: SubscribeNasBody = { productCode: req.productCode };
  const p = req.storageParams;
  if (p) {
    body.storageParams = {};
    if (p.name !== undefined) body.storageParams.name = p.name;
    if (p.description !== undefined) body.storageParams.description = p.description;
    if (p.storageCapacity !== undefined)
      body.storageParams.storageCapacity = String(p.storageCapacity);
    if (p.mountPath !== undefined) body.storageParams.mountPath = p.mountPath;
  }
  return body;
}

export const scaleNasBodySchema = z.object({
  id: z.string().min(1),
  scaleType: lenientEnum(SCALE_TYPES),
  capacity: z.int().positive("capacity is the GB added or removed and must be at least 1"),
});

/** A capacity change: the GB added or removed (a positive integer), not the target total. */
export interface ScaleNasRequest {
  scaleType: ScaleType;
  capacity: number;
}

const MOUNT_PATH_PATTERN = /^[a-zA-Z0-9_/]{2,64}$/;

export const updateNasMountPathBodySchema = z.object({
  mountPath: z.string().regex(MOUNT_PATH_PATTERN, "mountPath must match ^[a-zA-Z0-9_/]{2,64}$"),
});

/**
 * Body of POST /v1/product/nas-storage-available: aidcId or aidcCode, and the spec code
 * (the capacity rule of a NAS product: controllers/nasvolume/decisions.ts).
 */
export const nasAvailabilityBodySchema = z
  .object({
    aidcCode: z.string().min(1).optional(),
    aidcId: z.int().optional(),
    resourceSpecCode: z.string().min(1),
  })
  .refine((b) => b.aidcCode !== undefined || b.aidcId !== undefined, {
    message: "one of aidcId or aidcCode identifies the compute center",
  });

export type NasAvailabilityQuery = z.infer<typeof nasAvailabilityBodySchema>;

export interface NasListQuery {
  pageNo?: number;
  pageSize?: number;
  name?: string;
  status?: string;
  aidcId?: number;
}

export class NasOperations {
  private listView: KindList<NasInstance, NasListQuery> | undefined;

  constructor(private readonly ctx: OperationsContext) {}

  /** The NAS list, walked at most once per asked age for every NasVolume; made at first use. */
  private get list(): KindList<NasInstance, NasListQuery> {
    this.listView ??= new KindList(this.ctx.caller, {
      operation: "listNas",
      record: nasInstanceSchema,
      id: (nas) => nas.id,
      now: this.ctx.now,
      knownMissing: this.ctx.knownMissing,
      states: this.ctx.lists,
    });
    return this.listView;
  }

  /** NAS storage products, of one compute center or all the enterprise may use (cached). */
  products(aidcId?: number): Promise<NasProduct[]> {
    return this.ctx.catalog.read(`nas:${aidcId ?? ""}`, () =>
      this.ctx.caller.request("listNasProducts", { query: { aidcId } }, listOf(nasProductSchema)),
    );
  }

  /** Whether a NAS product can be provisioned in a compute center (cached like the catalog). */
  async isProductAvailable(q: NasAvailabilityQuery): Promise<boolean> {
    const body = this.ctx.caller.checkedBody("isNasProductAvailable", nasAvailabilityBodySchema, q);
    const key = JSON.stringify(["nas-available", q.aidcId, q.aidcCode, q.resourceSpecCode]);
    return this.ctx.catalog.read(key, () =>
      this.ctx.caller.request("isNasProductAvailable", { body }, nasAvailabilitySchema),
    );
  }

  /** Subscribes a NAS (asynchronous; never retried blindly). Returns the subscription result key. */
  async subscribe(req: SubscribeNasRequest): Promise<string> {
    const body = this.ctx.caller.checkedBody(
      "subscribeNas",
      subscribeNasBodySchema,
      toSubscribeNasBody(req),
    );
    return this.ctx.caller.request("subscribeNas", { body }, this.ctx.subscriptionKey);
  }

  /** The outcome of a NAS subscription. */
  subscriptionResult(key: string): Promise<SubscriptionResult> {
    return this.ctx.subscriptionResult("getNasSubscriptionResult", key);
  }

  /** Adds or removes `capacity` GB (the change, not the total; never retried blindly). */
  async scale(id: string, req: ScaleNasRequest): Promise<void> {
    const body = this.ctx.caller.checkedBody("scaleNas", scaleNasBodySchema, {
      id,
      scaleType: req.scaleType,
      capacity: req.capacity,
    });
    return this.list.changing(() =>
      this.ctx.caller.request("scaleNas", { params: { id }, body }, emptyData),
    );
  }

  /** Changes the default mount path (tasks created afterwards see it). */
  async updateMountPath(id: string, mountPath: string): Promise<void> {
    const body = this.ctx.caller.checkedBody("updateNasMountPath", updateNasMountPathBodySchema, {
      mountPath,
    });
    return this.list.changing(() =>
      this.ctx.caller.request("updateNasMountPath", { params: { id }, body }, emptyData),
    );
  }

  page(query: NasListQuery = {}): Promise<Page<NasInstance>> {
    return this.list.page(query);
  }

  /** Every NAS matching `query`, page by page (the walk returns whether it was complete). */
  iterate(
    query: Omit<NasListQuery, "pageNo"> = {},
  ): AsyncGenerator<NasInstance, PageWalkEnd, undefined> {
    return this.list.iterate(query);
  }

  /** The ids of every NAS from a shared walk of the whole list (see `KindList.ids`). */
  listIds(): Promise<ListedIds | undefined> {
    return this.list.ids();
  }

  /** The whole NAS list by id, at most `maxAgeMs` old (see `KindList.read`). */
  listSnapshot(maxAgeMs: number): Promise<ListSnapshotView<NasInstance> | undefined> {
    return this.list.read(maxAgeMs);
  }

  /** One NAS by id; `ServiceNotFoundError` when it does not exist. */
  get(id: string): Promise<NasInstance> {
    return this.ctx.caller.request("getNas", { params: { id } }, nasInstanceSchema);
  }

  /** Deletes a NAS; disabled unless configured. */
  delete(id: string): Promise<void> {
    return this.ctx.caller.request("deleteNas", { params: { id } }, emptyData);
  }

  /**
   * Whether one walk of the whole list, started now, proves that no NAS carries `token`
   * (`walkProvesTokenAbsent`); undefined when the list is disabled.
   */
  async provesTokenAbsent(token: string): Promise<boolean | undefined> {
    if (!this.list.enabled) return undefined;
    return walkProvesTokenAbsent(this.iterate({}), token);
  }

  /** Ids of the NAS whose description carries `token`'s marker (undefined: list disabled). */
  async findIdsByClientToken(token: string, name?: string): Promise<string[] | undefined> {
    if (!this.list.enabled) return undefined;
    return idsCarryingToken(this.iterate(name === undefined ? {} : { name }), token, (n) => n.id);
  }
}
