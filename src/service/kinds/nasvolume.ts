/**
 * The NasVolume kind's service operations: the NAS product catalog and availability,
 * the subscription (an asynchronous create) and its result, scale and mount path as
 * the spec documents them, and the list, detail and delete this project assumes
 * (docs/service-assumptions.md). `endpoints` joins the endpoint table (generated
 * kinds/index.ts); the account's calls (`AccountCalls`) hold one {@link NasOperations}.
 */
import { assumed, documented, type EndpointDeclarations } from "../endpoint-definition.js";
import { KindList } from "../kind-list.js";
import type { ListSnapshotView } from "../list-snapshot.js";
import type { OperationsContext } from "../operation-caller.js";
import type { ListedIds, PageWalkEnd } from "../pagination.js";
import {
  clientTokenInDescription,
  type SubscriptionResult,
  subscriptionKeySchema,
} from "../schemas/create.js";
import { emptyData, listOf, type Page } from "../schemas/data.js";
import {
  type NasAvailabilityQuery,
  type NasInstance,
  type NasListQuery,
  type NasProduct,
  nasAvailabilityBodySchema,
  nasAvailabilitySchema,
  nasInstanceSchema,
  nasProductSchema,
  type ScaleNasRequest,
  type SubscribeNasRequest,
  scaleNasBodySchema,
  subscribeNasBodySchema,
  toSubscribeNasBody,
  updateNasMountPathBodySchema,
} from "../schemas/nas.js";

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

/** NAS products and NAS storage, called through the context's caller. */
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

  /**
   * Whether a NAS product can be provisioned in a compute center (by id or code);
   * cached per compute center and product like the catalog.
   */
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
    return this.ctx.caller.request("subscribeNas", { body }, subscriptionKeySchema);
  }

  /** The outcome of a NAS subscription, in the canonical subscription-result shape. */
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

  /** One page of the NAS list (assumed endpoint). */
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

  /** One NAS by id (assumed endpoint); `ServiceNotFoundError` when it does not exist. */
  get(id: string): Promise<NasInstance> {
    return this.ctx.caller.request("getNas", { params: { id } }, nasInstanceSchema);
  }

  /** Deletes a NAS; disabled unless configured. */
  delete(id: string): Promise<void> {
    return this.ctx.caller.request("deleteNas", { params: { id } }, emptyData);
  }

  /**
   * Whether one walk of the whole NAS list, started now, proves that no NAS carries
   * `token`: the walk was complete and every record carries its description (where the
   * token travels); undefined when the list is disabled.
   */
  async provesTokenAbsent(token: string): Promise<boolean | undefined> {
    if (!this.list.enabled) return undefined;
    const walk = this.iterate({});
    let carried = true;
    let found = false;
    for (;;) {
      const next = await walk.next();
      if (next.done) return next.value.complete && carried && !found;
      if (next.value.description === undefined) carried = false;
      if (clientTokenInDescription(next.value.description) === token) found = true;
    }
  }

  /**
   * Ids of the NAS instances whose description carries the marker of `token`, or
   * undefined when the NAS list is disabled. `name` narrows the list first.
   */
  async findIdsByClientToken(token: string, name?: string): Promise<string[] | undefined> {
    if (!this.list.enabled) return undefined;
    const ids: string[] = [];
    for await (const nas of this.iterate(name === undefined ? {} : { name })) {
      if (clientTokenInDescription(nas.description) === token) ids.push(nas.id);
    }
    return ids;
  }
}
