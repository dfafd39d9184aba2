/**
 * Product catalog and NAS operations of the service client (see client-core.ts for how
 * the client is assembled; block volumes: block-volume-operations.ts, file systems:
 * kinds/filesystem.ts).
 */

import { emptyData, listOf, subscriptionKeySchema } from "./client-core.js";
import { clientTokenInDescription } from "./client-token.js";
import { ListSnapshot, type ListSnapshotView, listedIds } from "./list-snapshot.js";
import { type ListedIds, type PageWalkEnd, paginate } from "./pagination.js";
import { type Page, pageOf } from "./schemas/envelope.js";
import {
  type NasInstance,
  type NasListQuery,
  nasInstanceSchema,
  type ScaleNasRequest,
  type SubscribeNasRequest,
  scaleNasBodySchema,
  subscribeNasBodySchema,
  toSubscribeNasBody,
  updateNasMountPathBodySchema,
} from "./schemas/nas.js";
import {
  type NasAvailabilityQuery,
  type NasProduct,
  nasAvailabilityBodySchema,
  nasAvailabilitySchema,
  nasProductSchema,
  type TrainingProduct,
  trainingProductSchema,
} from "./schemas/products.js";
import type { SubscriptionResult } from "./schemas/subscription.js";
import { TrainingOperations } from "./training-operations.js";

/** Products and NAS storage. */
export class StorageOperations extends TrainingOperations {
  /** The NAS list, walked at most once per asked age for every NasVolume (`nasListSnapshot`). */
  private readonly nasSnapshot = new ListSnapshot<NasInstance>(
    () => this.iterateNas(),
    (nas) => nas.id,
    () => this.now(),
  );

  // --- products ----------------------------------------------------------------------

  /** Training resource specifications, of one compute center or all (cached, see `catalogTtlMs`). */
  async listTrainingProducts(aidcId?: number): Promise<TrainingProduct[]> {
    return this.cachedCatalog(`training:${aidcId ?? ""}`, () =>
      this.call("listTrainingProducts", { query: { aidcId } }, listOf(trainingProductSchema)),
    );
  }

  /** NAS storage products, of one compute center or all the enterprise may use (cached, see `catalogTtlMs`). */
  async listNasProducts(aidcId?: number): Promise<NasProduct[]> {
    return this.cachedCatalog(`nas:${aidcId ?? ""}`, () =>
      this.call("listNasProducts", { query: { aidcId } }, listOf(nasProductSchema)),
    );
  }

  /**
   * Whether a NAS product can be provisioned in a compute center (by id or code);
   * cached per compute center and product like the catalog (see `catalogTtlMs`), so
   * that a burst of creates of one product asks once.
   */
  async isNasProductAvailable(q: NasAvailabilityQuery): Promise<boolean> {
    const body = this.validBody("isNasProductAvailable", nasAvailabilityBodySchema, q);
    const key = JSON.stringify(["nas-available", q.aidcId, q.aidcCode, q.resourceSpecCode]);
    return this.cachedCatalog(key, () =>
      this.call("isNasProductAvailable", { body }, nasAvailabilitySchema),
    );
  }
  // --- NAS storage -------------------------------------------------------------------

  /** Subscribes a NAS (asynchronous; never retried blindly). Returns the subscription result key. */
  async subscribeNas(req: SubscribeNasRequest): Promise<string> {
    const body = this.validBody("subscribeNas", subscribeNasBodySchema, toSubscribeNasBody(req));
    return this.call("subscribeNas", { body }, subscriptionKeySchema);
  }

  /** The outcome of a NAS subscription, in the canonical subscription-result shape. */
  async getNasSubscriptionResult(key: string): Promise<SubscriptionResult> {
    return this.subscriptionResult("getNasSubscriptionResult", key);
  }

  /** Adds or removes `capacity` GB (the change, not the total; never retried blindly). */
  async scaleNas(id: string, req: ScaleNasRequest): Promise<void> {
    const body = this.validBody("scaleNas", scaleNasBodySchema, {
      id,
      scaleType: req.scaleType,
      capacity: req.capacity,
    });
    try {
      return await this.call("scaleNas", { params: { id }, body }, emptyData);
    } finally {
      this.nasSnapshot.invalidate();
    }
  }

  /** Changes the default mount path (tasks created afterwards see it). */
  async updateNasMountPath(id: string, mountPath: string): Promise<void> {
    const body = this.validBody("updateNasMountPath", updateNasMountPathBodySchema, { mountPath });
    try {
      return await this.call("updateNasMountPath", { params: { id }, body }, emptyData);
    } finally {
      this.nasSnapshot.invalidate();
    }
  }

  /** One page of the NAS list (assumed endpoint). */
  async listNas(query: NasListQuery = {}): Promise<Page<NasInstance>> {
    return this.call("listNas", { query: { ...query } }, pageOf(nasInstanceSchema));
  }

  /** Every NAS matching `query`, page by page (the walk returns whether it was complete). */
  iterateNas(
    query: Omit<NasListQuery, "pageNo"> = {},
  ): AsyncGenerator<NasInstance, PageWalkEnd, undefined> {
    return paginate(
      (pageNo, pageSize) => this.listNas({ ...query, pageNo, pageSize }),
      (nas) => nas.id,
      query.pageSize,
    );
  }

  /**
   * The ids of every NAS from a walk of the whole NAS list that started now or later
   * (shared with every caller that asks meanwhile, list-snapshot.ts), and whether the
   * walk was complete (see `PageWalkEnd`); undefined when the NAS list is disabled or the
   * walk failed.
   */
  async listNasIds(): Promise<ListedIds | undefined> {
    if (!this.isEndpointEnabled("listNas")) return undefined;
    const view = await this.nasSnapshot.readSince(this.now());
    return view && listedIds(view);
  }

  /**
   * The whole NAS list by id, walked anew when the last walk is `maxAgeMs` old or more
   * and shared by every caller (list-snapshot.ts); undefined when the NAS list is
   * disabled, known to be missing, or its walk failed.
   */
  async nasListSnapshot(maxAgeMs: number): Promise<ListSnapshotView<NasInstance> | undefined> {
    if (!this.isEndpointEnabled("listNas") || this.operations.verdict("listNas") === "missing") {
      return undefined;
    }
    return this.nasSnapshot.read(maxAgeMs);
  }

  /** One NAS by id (assumed endpoint); `ServiceNotFoundError` when it does not exist. */
  async getNas(id: string): Promise<NasInstance> {
    return this.call("getNas", { params: { id } }, nasInstanceSchema);
  }

  /** Deletes a NAS; disabled unless configured. */
  async deleteNas(id: string): Promise<void> {
    return this.call("deleteNas", { params: { id } }, emptyData);
  }

  /**
   * Ids of the NAS instances whose description carries the marker of `token`, or
   * undefined when the NAS list is disabled. `name` narrows the list first.
   */
  async findNasIdsByClientToken(token: string, name?: string): Promise<string[] | undefined> {
    if (!this.isEndpointEnabled("listNas")) return undefined;
    const ids: string[] = [];
    for await (const nas of this.iterateNas(name === undefined ? {} : { name })) {
      if (clientTokenInDescription(nas.description) === token) ids.push(nas.id);
    }
    return ids;
  }
}
