/**
 * The NasVolume controller: the generic managed reconciler (../managed, declared with
 * `managedController`) with the NAS ExternalClient (external.ts) and the NAS status
 * mapping below.
 */
import { nasProductCrd } from "../../crds/nasproduct.js";
import { type NasVolumeStatus, nasVolumeCrd } from "../../crds/nasvolume.js";
import { capAddress, capFreeText, capValue } from "../../runtime/conditions.js";
import type { ControllerDefinition } from "../../runtime/controller.js";
import { stripClientTokenMarker } from "../../service/index.js";
import type { NasInstance } from "../../service/schemas/nas.js";
import { productAppearedWatch } from "../catalog/refused-objects.js";
import type { ControllerDeps } from "../controller-factory.js";
import type { ManagedFacts } from "../managed/call.js";
import { exportData } from "../managed/export.js";
import type { FixedFieldDiff, ManagedKind } from "../managed/external-client.js";
import { contradictions } from "../managed/fixed-fields.js";
import { managedController, managedLoopOptions } from "../managed/managed-controller.js";
import { gb, nasLateInitialize, nasPhase, readScaleRecord, SCALE_ANNOTATION } from "./decisions.js";
import { NasExternalClient, type NasVolumeObject } from "./external.js";

/** The finalizer of NasVolumes. */
export const NAS_FINALIZER = "aidc.io/nasvolume";

/** Copies `v` into `out[k]` when it is defined. */
function put<K extends keyof NasVolumeStatus>(
  out: NasVolumeStatus,
  k: K,
  v: NasVolumeStatus[K] | undefined,
): void {
  if (v !== undefined) out[k] = v;
}

/** The status fields of a NasVolume that come from the facts (managed/reconciler.ts keeps the rest). */
export const NAS_FACT_FIELDS = [
  "storageId",
  "subscriptionKey",
  "subscription",
  "phase",
  "lastScale",
] as const;

/**
 * The NasVolume status (without conditions) from the facts and the remote record;
 * without a remote record, only {@link NAS_FACT_FIELDS} (the loop keeps the previous
 * remote fields).
 */
export function nasStatus(
  obj: NasVolumeObject,
  facts: ManagedFacts,
  remote: NasInstance | undefined,
): NasVolumeStatus {
  const prev = obj.status ?? {};
  const lastScale = readScaleRecord(obj.metadata.annotations?.[SCALE_ANNOTATION]);
  const out: NasVolumeStatus = {};
  if (remote) {
    const quota = gb(remote.quota);
    const used = gb(remote.used);
    put(out, "remoteStatus", capValue(remote.status));
    put(out, "name", capValue(remote.name));
    put(out, "storageType", capValue(remote.storageType));
    put(out, "orderInstanceId", capValue(remote.orderInstanceId));
    if (Number.isFinite(quota)) out.capacityGB = quota;
    if (Number.isFinite(used)) out.usedGB = used;
    put(out, "mountPath", capAddress(remote.mountPath));
    put(out, "aidcId", remote.aidcId);
    put(out, "productCode", capValue(remote.resource?.productCode));
    put(out, "productName", capValue(remote.resource?.productName));
    put(out, "price", capValue(remote.price));
    put(out, "priceUnit", capValue(remote.priceUnit));
    put(out, "createdTime", capValue(remote.createdTime));
    put(out, "lastUpdateTime", capValue(remote.lastUpdateTime));
    put(out, "releaseTime", capValue(remote.releaseTime));
    const description = stripClientTokenMarker(remote.description ?? "");
    put(out, "description", description === "" ? undefined : capFreeText(description));
    put(out, "tenantId", capValue(remote.tenantId));
    put(out, "creator", capValue(remote.createdByName ?? remote.createdBy));
    put(out, "sharePolicy", capValue(remote.sharePolicy?.policy));
    put(out, "createScene", capValue(remote.createScene));
    put(out, "createSceneInstanceId", capValue(remote.createSceneInstanceId));
    put(out, "isDefaultStorage", remote.isDefaultStorage);
  }
  // What the phase reads of the remote record: this one, else the one last seen.
  const seen = remote ? out : prev;
  put(out, "storageId", facts.externalId);
  put(out, "subscriptionKey", facts.subscriptionKey ?? prev.subscriptionKey);
  put(out, "subscription", facts.subscription);
  if (lastScale) out.lastScale = lastScale;
  out.phase = nasPhase({
    remoteStatus: seen.remoteStatus,
    subscription: facts.subscription?.outcome,
    scaling:
      lastScale !== undefined &&
      seen.capacityGB === lastScale.fromGB &&
      lastScale.toGB !== lastScale.fromGB,
    bound: facts.externalId !== undefined,
  });
  return out;
}

/** The spec fields the service cannot change that `remote` contradicts (ManagedKind.fixedFields). */
export function nasFixedFields(obj: NasVolumeObject, remote: NasInstance): FixedFieldDiff[] {
  return contradictions([
    ["productCode", obj.spec.productCode, remote.resource?.productCode],
    ["name", obj.spec.name, remote.name],
    ["aidcId", obj.spec.aidcId, remote.aidcId],
  ]);
}

/** The managed kind of NasVolume. */
export function nasVolumeKind(scaleSettleMs?: number): ManagedKind<NasVolumeObject, NasInstance> {
  return {
    resource: nasVolumeCrd,
    exportValues: (_obj, status) =>
      exportData({ STORAGE_ID: status.storageId, MOUNT_PATH: status.mountPath }),
    finalizer: NAS_FINALIZER,
    connect: (conn) => new NasExternalClient(conn.service, scaleSettleMs),
    adoptId: (obj) => obj.spec.storageId,
    status: (obj, facts, remote) => nasStatus(obj, facts, remote) as Record<string, unknown>,
    statusId: (obj) => obj.status?.storageId,
    factFields: NAS_FACT_FIELDS,
    lateInitialize: nasLateInitialize,
    fixedFields: nasFixedFields,
  };
}

/** Tunables of the NasVolume controller beyond the operator config (tests shorten them). */
export interface NasVolumeControllerOptions {
  /** How long a new NAS may be missing from the NAS list after a create. Default: `service.listVisibilityWindowMs`. */
  visibilityGraceMs?: number;
  /** How long a sent scale may take to show in the quota. Default: `service.nasScaleSettleMs`. */
  scaleSettleMs?: number;
}

/**
 * The NasVolume controller, with `options` beyond the operator config (a
 * ControllerFactory: src/controllers/index.ts registers it).
 */
export function nasVolumeController(
  deps: ControllerDeps,
  options: NasVolumeControllerOptions = {},
): ControllerDefinition {
  const settleMs = options.scaleSettleMs ?? deps.config.service.nasScaleSettleMs;
  return managedController(nasVolumeKind(settleMs), {
    connections: deps.connections,
    loop: managedLoopOptions(deps.config, "NasVolume", options.visibilityGraceMs),
    references: {
      watches: [productAppearedWatch(deps.connections, nasVolumeCrd, nasProductCrd)],
      reason: "read the NasProducts, to try a NasVolume refused for its code again when it appears",
    },
  });
}
