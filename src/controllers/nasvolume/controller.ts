/**
 * The NasVolume controller: the generic managed reconciler (../managed, declared with
 * `managedController`) with the NAS ExternalClient (external.ts) and the NAS status and
 * decisions (decisions.ts), declared below.
 */
import { nasProductCrd } from "../../crds/nasproduct.js";
import { nasVolumeCrd } from "../../crds/nasvolume.js";
import type { ControllerDefinition } from "../../runtime/controller.js";
import type { NasInstance } from "../../service/schemas/nas.js";
import { productAppearedWatch } from "../catalog/refused-objects.js";
import type { ControllerDeps } from "../controller-factory.js";
import { exportData } from "../managed/export.js";
import type { FixedFieldDiff, ManagedKind } from "../managed/external-client.js";
import { contradictions } from "../managed/fixed-fields.js";
import { managedController, managedLoopOptions } from "../managed/managed-controller.js";
import { NAS_FACT_FIELDS, nasLateInitialize, nasStatus } from "./decisions.js";
import { type NasVolumeObject, nasAdoptId, nasConnect, nasStatusId } from "./external.js";

/** The finalizer of NasVolumes. */
export const NAS_FINALIZER = "aidc.io/nasvolume";

/** The spec fields the service cannot change that `remote` contradicts (ManagedKind.fixedFields). */
export function nasFixedFields(
  obj: NasVolumeObject,
  remote: NasInstance,
  boundId: string,
): FixedFieldDiff[] {
  return contradictions([
    ["storageId", obj.spec.storageId, boundId],
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
    connect: nasConnect(scaleSettleMs),
    adoptId: nasAdoptId,
    status: nasStatus,
    statusId: nasStatusId,
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
