/**
 * Pure decisions of the NasVolume controller (no I/O; external.ts makes the calls): the
 * preflight verdict and the capacity rule (the operator's reading of the spec; the
 * emulator has its own, src/emulator/kinds/nasvolume.capacity.ts), what a spec change
 * asks of a storage (scale by the difference, mount path), Ready, the phase, and
 * LateInitialize (capacityGB and mountPath, where the service's values pass the spec's
 * rules).
 */

import { CATALOG_LABELS } from "../../crds/catalog.js";
import { INTEGER_LIMITS, MOUNT_PATH_PATTERN } from "../../crds/fields.js";
import {
  NAS_VOLUME_REASONS,
  type NasVolumePhase as NasPhase,
  type NasVolume as NasVolumeObject,
} from "../../crds/nasvolume.js";
import type { ConditionReason } from "../../crds/reasons.js";
import type { NasInstance, NasProduct } from "../../service/schemas/nas.js";
import { closestCodes, closestCodesText } from "../catalog/closest-codes.js";
import type { PreflightRefusal, ReadyState } from "../managed/call.js";

const R = NAS_VOLUME_REASONS.names;

/** Annotation recording the last capacity change, written BEFORE the scale call. */
export const SCALE_ANNOTATION = "aidc.io/nas-scale";

/** A capacity change as recorded in {@link SCALE_ANNOTATION}. */
export interface ScaleRecord {
  scaleType: "ScaleUp" | "ScaleDown";
  /** GB added or removed (the service takes the change). */
  capacityGB: number;
  fromGB: number;
  toGB: number;
  /** RFC 3339 time the request was about to be sent. */
  requestedTime: string;
}

/** Reads {@link SCALE_ANNOTATION}; undefined when absent or malformed. */
export function readScaleRecord(raw: string | undefined): ScaleRecord | undefined {
  if (!raw) return undefined;
  try {
    const v = JSON.parse(raw) as Partial<ScaleRecord>;
    const ints = [v.capacityGB, v.fromGB, v.toGB].every((n) => Number.isInteger(n));
    if (!ints || (v.scaleType !== "ScaleUp" && v.scaleType !== "ScaleDown")) return undefined;
    return v as ScaleRecord;
  } catch {
    return undefined;
  }
}

/** What the preflight looked at. */
export interface PreflightInput {
  productCode: string;
  aidcId: number | undefined;
  capacityGB: number | undefined;
  /** The NAS products of the compute center (or all). */
  products: NasProduct[];
  /** The nas-storage-available answer; undefined when not asked (no product found). */
  available: boolean | undefined;
}

/** The product of the spec, if the catalog lists it (for the aidcId when given). */
export function findProduct(
  products: NasProduct[],
  productCode: string,
  aidcId: number | undefined,
): NasProduct | undefined {
  return products.find(
    (p) => p.productCode === productCode && (aidcId === undefined || p.aidcId === aidcId),
  );
}

/**
 * Why `capacityGB` is not an allowed capacity of `product`, or undefined when it is:
 * with a min and/or max bound, any whole number within them (an absent bound is no
 * limit); with neither, only the default `paramValue`; with neither and no default,
 * any positive whole number.
 */
export function nasCapacityRefusal(product: NasProduct, capacityGB: number): string | undefined {
  const code = product.productCode ?? product.name;
  if (!Number.isInteger(capacityGB) || capacityGB <= 0) {
    return `capacity ${capacityGB} GB is not a positive whole number`;
  }
  const { paramValueMin: min, paramValueMax: max, paramValue } = product;
  if (min === undefined && max === undefined) {
    const fixed = Number(paramValue);
    if (paramValue === undefined || !Number.isFinite(fixed) || fixed === capacityGB) return;
    return `NAS product ${code} has no capacity bounds, so only its default of ${fixed} GB is allowed (got ${capacityGB} GB)`;
  }
  if (min !== undefined && capacityGB < min) {
    return `capacity ${capacityGB} GB is below the minimum of ${min} GB of NAS product ${code}`;
  }
  if (max !== undefined && capacityGB > max) {
    return `capacity ${capacityGB} GB is above the maximum of ${max} GB of NAS product ${code}`;
  }
  return undefined;
}

/**
 * The preflight verdict: the product exists (for the aidcId), the capacity is allowed
 * (within paramValueMin/Max, or equal to paramValue without bounds), and the product
 * is available. Undefined when the order may be placed.
 */
export function preflightVerdict(input: PreflightInput): PreflightRefusal | undefined {
  const where = input.aidcId === undefined ? "" : ` in compute center ${input.aidcId}`;
  const product = findProduct(input.products, input.productCode, input.aidcId);
  if (!product) {
    const known = input.products.map((p) => ({ code: p.productCode ?? p.name, aidcId: p.aidcId }));
    const list = `kubectl get nasproducts${
      input.aidcId === undefined ? "" : ` -l ${CATALOG_LABELS.computeCenter}=${input.aidcId}`
    }`;
    const closest = closestCodesText(closestCodes(input.productCode, known, input.aidcId), list);
    return {
      reason: R.ProductNotFoundRefused,
      message: `NAS product ${input.productCode} is not offered${where} (${closest})`,
    };
  }
  if (input.capacityGB !== undefined) {
    const refused = nasCapacityRefusal(product, input.capacityGB);
    if (refused) return { reason: R.CapacityRefused, message: refused };
  }
  if (input.available === false) {
    return {
      reason: R.ProductUnavailable,
      message: `NAS product ${input.productCode} cannot be provisioned${where} right now (nas-storage-available answered false); will check again`,
      retry: true,
    };
  }
  return undefined;
}

/** The remote facts a sync decision needs. */
export interface SyncInput {
  /** spec.capacityGB (undefined: keep whatever the storage has). */
  desiredGB: number | undefined;
  /** spec.mountPath (undefined: keep). */
  desiredMountPath: string | undefined;
  /** Remote quota and used amount in GB (NaN when the service sent no number). */
  quotaGB: number;
  usedGB: number;
  mountPath: string | undefined;
  remoteStatus: string | undefined;
  /** The last recorded scale request. */
  lastScale: ScaleRecord | undefined;
  /** Milliseconds since `lastScale.requestedTime`. */
  lastScaleAgeMs: number;
  /** How long a sent scale may take to show in the quota before it counts as lost. */
  scaleSettleMs: number;
}

/** One change the sync asks for, or why it cannot be made now. */
export type SyncAction =
  | { action: "SetMountPath"; mountPath: string }
  | { action: "Scale"; record: Omit<ScaleRecord, "requestedTime"> }
  | { action: "Wait"; message: string }
  | { action: "Refuse"; reason: ConditionReason; message: string };

/**
 * What to do for the spec: the mount path first (idempotent), then capacity. A scale
 * recorded but not yet visible in the quota is waited for, and never sent twice: after
 * `scaleSettleMs` it is refused as ScaleOutcomeUnknown until the user removes the
 * record (or the quota shows the change). A shrink below the used amount is refused.
 */
export function decideSync(input: SyncInput): SyncAction[] {
  const actions: SyncAction[] = [];
  if (input.desiredMountPath !== undefined && input.desiredMountPath !== input.mountPath) {
    actions.push({ action: "SetMountPath", mountPath: input.desiredMountPath });
  }
  const desired = input.desiredGB;
  if (desired === undefined || desired === input.quotaGB) return actions;
  if (!Number.isFinite(input.quotaGB)) {
    actions.push({
      action: "Refuse",
      reason: R.RemoteCapacityUnknown,
      message:
        "the service did not report the storage's quota as a number, so the change cannot be computed",
    });
    return actions;
  }
  const last = input.lastScale;
  if (last && last.toGB !== input.quotaGB && last.fromGB === input.quotaGB) {
    // The recorded change was (maybe) sent but does not show: sending it again could
    // apply it twice, so the operator waits, and after the settle time asks the user.
    if (input.lastScaleAgeMs < input.scaleSettleMs) {
      actions.push({
        action: "Wait",
        message: `a ${last.scaleType} to ${last.toGB} GB was sent; waiting for the quota to show it`,
      });
    } else {
      actions.push({
        action: "Refuse",
        reason: R.ScaleOutcomeUnknown,
        message: `a ${last.scaleType} by ${last.capacityGB} GB (${last.fromGB} → ${last.toGB} GB) was requested at ${last.requestedTime || "an unknown time"} but the quota still shows ${input.quotaGB} GB; it is not sent again automatically, since a second request could apply it twice. Check the storage, then remove the ${SCALE_ANNOTATION} annotation to let the operator send the change again`,
      });
    }
    return actions;
  }
  if (input.remoteStatus !== "Running") {
    actions.push({
      action: "Wait",
      message: `the storage is ${input.remoteStatus ?? "not running"}; it can be scaled once Running`,
    });
    return actions;
  }
  if (desired < input.quotaGB && Number.isFinite(input.usedGB) && desired < input.usedGB) {
    actions.push({
      action: "Refuse",
      reason: R.ShrinkBelowUsedRefused,
      message: `capacityGB ${desired} is below the ${input.usedGB} GB in use; the storage stays at ${input.quotaGB} GB (shrinking would lose data)`,
    });
    return actions;
  }
  const up = desired > input.quotaGB;
  actions.push({
    action: "Scale",
    record: {
      scaleType: up ? "ScaleUp" : "ScaleDown",
      capacityGB: Math.abs(desired - input.quotaGB),
      fromGB: input.quotaGB,
      toGB: desired,
    },
  });
  return actions;
}

/** The Ready condition for a remote NAS status. */
export function nasReady(remoteStatus: string | undefined): ReadyState {
  if (remoteStatus === "Running") return { status: "True", reason: "Available", message: "" };
  if (remoteStatus === "Creating") {
    return { status: "False", reason: "Creating", message: "the storage is being created" };
  }
  return {
    status: "False",
    reason: "Unavailable",
    message: `the storage is ${remoteStatus ?? "in an unreported state"}`,
  };
}

/** The phase for what is known. */
export function nasPhase(input: {
  remoteStatus: string | undefined;
  subscription: "Pending" | "Succeeded" | "Failed" | undefined;
  scaling: boolean;
  bound: boolean;
}): NasPhase {
  if (!input.bound) {
    if (input.subscription === "Failed") return "Failed";
    if (input.subscription === "Pending") return "Creating";
    return "Pending";
  }
  if (input.remoteStatus === "Creating") return "Creating";
  if (input.remoteStatus === "Running") return input.scaling ? "Scaling" : "Ready";
  if (input.remoteStatus === undefined) return "Pending";
  return "Unknown";
}

/** The spec fields the sync actions would change (the DriftDetected message). */
export function nasDrift(actions: readonly SyncAction[]): string[] {
  const fields = new Set<string>();
  for (const a of actions) {
    if (a.action === "SetMountPath") fields.add("mountPath");
    else if (a.action === "Scale" || a.action === "Refuse") fields.add("capacityGB");
  }
  return [...fields];
}

/** A number of GB from the service's text ("" or junk → NaN). */
export function gb(text: string | undefined): number {
  return text === undefined || text.trim() === "" ? Number.NaN : Number(text);
}

/** The spec fields `remote` fills: capacityGB from its quota, mountPath from its own. */
export function nasLateInitialize(
  obj: NasVolumeObject,
  remote: NasInstance,
): Record<string, unknown> | undefined {
  const fields: Record<string, unknown> = {};
  const quota = gb(remote.quota);
  if (
    obj.spec.capacityGB === undefined &&
    Number.isInteger(quota) &&
    quota >= 1 &&
    quota <= INTEGER_LIMITS.capacityGB
  ) {
    fields.capacityGB = quota;
  }
  if (obj.spec.mountPath === undefined && MOUNT_PATH_PATTERN.test(remote.mountPath ?? "")) {
    fields.mountPath = remote.mountPath;
  }
  return fields;
}
