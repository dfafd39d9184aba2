/**
 * The NasVolume's client of the service: a NAS storage ordered with the client token in
 * its description, found again by the token through the NAS list, scaled by the
 * difference (recorded in {@link SCALE_ANNOTATION} before the call), its mount path set.
 */
import { NAS_VOLUME_REASONS, type NasVolume } from "../../crds/nasvolume.js";
import { rfc3339 } from "../../runtime/resource.js";
import type { AccountCalls } from "../../service/account.js";
import { DEFAULT_NAS_SCALE_SETTLE_MS } from "../../service/defaults.js";
import { ServiceError, ServiceNotFoundError } from "../../service/errors.js";
import type { ListedIds } from "../../service/pagination.js";
import { ownerMarkInDescription, withCreateMarkers } from "../../service/schemas/create.js";
import type { NasInstance } from "../../service/schemas/nas.js";
import type {
  CreateResult,
  DeleteResult,
  ListedObservation,
  ManagedCall,
  Observation,
  OwnerMark,
  PreflightRefusal,
  SentCreate,
  SubscriptionPoll,
  UpdateResult,
} from "../managed/call.js";
import { listedObservation } from "../managed/call.js";
import {
  absenceVerdict,
  type Connection,
  type KindClient,
  type TokenAbsence,
} from "../managed/external-client.js";
import { formatOwnerMark, ownerMark, parseOwnerMark } from "../managed/tenancy.js";
import { SCALE_ANNOTATION, type ScaleRecord } from "./capacity.js";
import {
  decideSync,
  findProduct,
  gb,
  nasCapacityRefusal,
  nasDrift,
  nasReady,
  preflightVerdict,
  readScaleRecord,
} from "./decisions.js";

export type NasVolumeObject = NasVolume;

/** Operations without which a NAS order cannot finish or be observed (paths assumed). */
export const NAS_ORDER_OPERATIONS = ["getNasSubscriptionResult", "listNas", "getNas"] as const;

/** The kind's `connect`: the NAS client of the account `conn`. */
export function nasConnect(scaleSettleMs?: number): (conn: Connection) => NasExternalClient {
  return (conn) => new NasExternalClient(conn.service, scaleSettleMs, conn.name);
}

/** The storage the spec adopts (`spec.storageId`), and the one the status records. */
export const nasAdoptId = (obj: NasVolumeObject) => obj.spec.storageId;
export const nasStatusId = (obj: NasVolumeObject) => obj.status?.storageId;

/** The storage's directory name: spec.name, else metadata.name. */
export function nasName(obj: NasVolumeObject): string {
  return obj.spec.name ?? obj.metadata.name ?? "";
}

/**
 * Whether a listed NAS record has what the status and checks need (the description: the
 * owner mark); else the poll reads the detail.
 */
export function listRecordSuffices(nas: NasInstance): boolean {
  return (
    nas.status !== undefined &&
    nas.quota !== undefined &&
    nas.used !== undefined &&
    nas.description !== undefined
  );
}

export class NasExternalClient implements KindClient<NasVolumeObject, NasInstance> {
  constructor(
    private readonly service: AccountCalls,
    private readonly scaleSettleMs = DEFAULT_NAS_SCALE_SETTLE_MS,
    /** The account's ServiceConnection (undefined: the default), for refusals' hints. */
    private readonly connection?: string,
  ) {}

  requireOperations(): Promise<void> {
    return this.service.requireOperations(NAS_ORDER_OPERATIONS, "a NAS order");
  }

  ownerOf(remote: NasInstance): OwnerMark | undefined {
    return parseOwnerMark(ownerMarkInDescription(remote.description));
  }

  async preflight({ obj }: ManagedCall<NasVolumeObject>): Promise<PreflightRefusal | undefined> {
    const { productCode, aidcId, capacityGB } = obj.spec;
    const products = await this.service.nas.products(aidcId);
    const product = findProduct(products, productCode, aidcId);
    const center = aidcId ?? product?.aidcId;
    const available =
      product && center !== undefined
        ? await this.service.nas.isProductAvailable({
            aidcId: center,
            resourceSpecCode: productCode,
          })
        : undefined;
    const { connection } = this;
    return preflightVerdict({ productCode, aidcId, capacityGB, products, available, connection });
  }

  async create({ obj }: ManagedCall<NasVolumeObject>, token: string): Promise<CreateResult> {
    const { spec } = obj;
    const key = await this.service.nas.subscribe({
      productCode: spec.productCode,
      storageParams: {
        name: nasName(obj),
        description: withCreateMarkers(
          spec.description,
          token,
          formatOwnerMark(ownerMark(obj.metadata.namespace ?? "", obj.metadata.name ?? "")),
        ),
        ...(spec.capacityGB !== undefined ? { storageCapacity: spec.capacityGB } : {}),
        ...(spec.mountPath !== undefined ? { mountPath: spec.mountPath } : {}),
      },
    });
    return { subscriptionKey: key };
  }

  async pollSubscription(
    _call: ManagedCall<NasVolumeObject>,
    key: string,
  ): Promise<SubscriptionPoll> {
    const r = await this.service.nas.subscriptionResult(key);
    if (r.state === "Pending") return { state: "Pending", empty: r.empty };
    if (r.state === "Failed") return { state: "Failed", message: r.message ?? "no reason given" };
    return r.instanceId ? { state: "Succeeded", externalId: r.instanceId } : { state: "Succeeded" };
  }

  lookupByToken(
    { obj }: ManagedCall<NasVolumeObject>,
    { token }: SentCreate,
  ): Promise<string[] | undefined> {
    return this.service.nas.findIdsByClientToken(token, nasName(obj));
  }

  async tokenAbsence(
    _call: ManagedCall<NasVolumeObject>,
    { token }: SentCreate,
  ): Promise<TokenAbsence> {
    return absenceVerdict(await this.service.nas.provesTokenAbsent(token));
  }

  listIds(): Promise<ListedIds | undefined> {
    return this.service.nas.listIds();
  }

  async observe(call: ManagedCall<NasVolumeObject>, id: string): Promise<Observation<NasInstance>> {
    let remote: NasInstance;
    try {
      remote = await this.service.nas.get(id);
    } catch (err) {
      if (err instanceof ServiceNotFoundError) return { exists: false };
      throw err;
    }
    return this.observation(call, remote);
  }

  async exists(_call: ManagedCall<NasVolumeObject>, id: string): Promise<boolean> {
    try {
      await this.service.nas.get(id);
      return true;
    } catch (err) {
      if (err instanceof ServiceNotFoundError) return false;
      throw err;
    }
  }

  async observeFromList(
    call: ManagedCall<NasVolumeObject>,
    id: string,
    maxAgeMs: number,
  ): Promise<ListedObservation<NasInstance> | undefined> {
    const view = await this.service.nas.listSnapshot(maxAgeMs);
    return listedObservation(view, id, (r) => this.observation(call, r), listRecordSuffices);
  }

  private observation(
    call: ManagedCall<NasVolumeObject>,
    remote: NasInstance,
  ): Observation<NasInstance> & { exists: true } {
    const actions = this.decide(call.obj, remote, call.now());
    return {
      exists: true,
      upToDate: actions.length === 0,
      differs: nasDrift(actions),
      ready: nasReady(remote.status),
      remote,
    };
  }

  async update(
    call: ManagedCall<NasVolumeObject>,
    id: string,
    remote: NasInstance,
  ): Promise<UpdateResult> {
    const now = call.now();
    const done: string[] = [];
    for (const a of this.decide(call.obj, remote, now)) {
      if (a.action === "SetMountPath") {
        await this.service.nas.updateMountPath(id, a.mountPath);
        done.push(`mount path set to ${a.mountPath}`);
      } else if (a.action === "Scale") {
        const refusal = await this.capacityRefusal(call.obj, a.record.toGB);
        if (refusal)
          return done.length === 0 ? refusal : { outcome: "Applied", message: done.join("; ") };
        const record: ScaleRecord = { ...a.record, requestedTime: rfc3339(now) };
        // Recorded before the call: after a crash the next reconcile sees the record and
        // waits for the quota instead of sending the change again.
        await call.annotate({ [SCALE_ANNOTATION]: JSON.stringify(record) });
        try {
          await this.service.nas.scale(id, {
            scaleType: record.scaleType,
            capacity: record.capacityGB,
          });
        } catch (err) {
          // A definite "not applied" (refused, unauthorised, never sent) clears the
          // record so the change can be sent again; an unknown outcome keeps it.
          if (err instanceof ServiceError && !err.outcomeUnknown) {
            await call.annotate({ [SCALE_ANNOTATION]: null });
          }
          throw err;
        }
        done.push(
          `${record.scaleType} by ${record.capacityGB} GB (${record.fromGB} → ${record.toGB} GB)`,
        );
      } else if (a.action === "Wait") {
        if (done.length === 0) return { outcome: "Waiting", message: a.message };
      } else if (done.length === 0) {
        return { outcome: "Refused", reason: a.reason, message: a.message };
      }
    }
    return { outcome: "Applied", message: done.join("; ") };
  }

  deleteConfigured(): boolean {
    return this.service.isEndpointEnabled("deleteNas");
  }

  async delete(_call: ManagedCall<NasVolumeObject>, id: string): Promise<DeleteResult> {
    if (!this.service.isEndpointEnabled("deleteNas")) return "NotConfigured";
    await this.service.nas.delete(id);
    // The service may show the storage (e.g. Releasing) for a while after the delete:
    // the loop observes until it is gone.
    return "InProgress";
  }

  /** A refusal when the product's bounds do not allow `toGB` (before a scale). */
  private async capacityRefusal(
    obj: NasVolumeObject,
    toGB: number,
  ): Promise<UpdateResult | undefined> {
    const { productCode, aidcId } = obj.spec;
    const product = findProduct(await this.service.nas.products(aidcId), productCode, aidcId);
    const refused = product && nasCapacityRefusal(product, toGB);
    return refused
      ? { outcome: "Refused", reason: NAS_VOLUME_REASONS.names.CapacityRefused, message: refused }
      : undefined;
  }

  private decide(obj: NasVolumeObject, remote: NasInstance, now: Date) {
    const lastScale = readScaleRecord(obj.metadata.annotations?.[SCALE_ANNOTATION]);
    return decideSync({
      desiredGB: obj.spec.capacityGB,
      desiredMountPath: obj.spec.mountPath,
      quotaGB: gb(remote.quota),
      usedGB: gb(remote.used),
      mountPath: remote.mountPath,
      remoteStatus: remote.status,
      lastScale,
      lastScaleAgeMs: lastScale ? now.getTime() - Date.parse(lastScale.requestedTime) : Number.NaN,
      scaleSettleMs: this.scaleSettleMs,
    });
  }
}
