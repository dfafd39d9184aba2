/**
 * Pure decisions and status of the NasVolume (external.ts makes the calls): the preflight
 * and the capacity rule (the emulator reads the spec on its own,
 * src/emulator/kinds/nasvolume.capacity.ts), what a spec change asks (a scale:
 * capacity.ts), Ready, the phase, the status fields, and LateInitialize.
 */
import { CATALOG_LABELS } from "../../crds/catalog.js";
import { INTEGER_LIMITS, MOUNT_PATH_PATTERN } from "../../crds/fields.js";
import {
  NAS_VOLUME_REASONS,
  type NasVolumePhase as NasPhase,
  type NasVolume as NasVolumeObject,
  type NasVolumeStatus,
} from "../../crds/nasvolume.js";
import { capAddress, capFreeText, capValue } from "../../runtime/object-writes.js";
import { stripClientTokenMarker } from "../../service/index.js";
import type { NasInstance, NasProduct } from "../../service/schemas/nas.js";
import { closestCodes, closestCodesText } from "../catalog/closest-codes.js";
import { productListCommand } from "../catalog/naming.js";
import type { ManagedFacts, PreflightRefusal, ReadyState } from "../managed/call.js";
import {
  type CapacityAction,
  type CapacityInput,
  decideCapacity,
  SCALE_ANNOTATION,
  type ScaleRecord,
} from "./capacity.js";

const R = NAS_VOLUME_REASONS.names;

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
  /** The object's ServiceConnection, whose catalog a refusal names. */
  connection?: string | undefined;
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

/** Why the order may not be placed: no such product, a capacity refused, not available. */
export function preflightVerdict(input: PreflightInput): PreflightRefusal | undefined {
  const where = input.aidcId === undefined ? "" : ` in compute center ${input.aidcId}`;
  const product = findProduct(input.products, input.productCode, input.aidcId);
  if (!product) {
    const known = input.products.map((p) => ({ code: p.productCode ?? p.name, aidcId: p.aidcId }));
    const center = { [CATALOG_LABELS.computeCenter]: input.aidcId };
    const list = productListCommand("nasproducts", input.connection, center);
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

/** The spec and remote facts a sync decision needs (a desired value undefined: keep). */
export interface SyncInput extends CapacityInput {
  desiredGB: number | undefined;
  desiredMountPath: string | undefined;
  mountPath: string | undefined;
}

/** One change the sync asks for, or why it cannot be made now. */
export type SyncAction = { action: "SetMountPath"; mountPath: string } | CapacityAction;

/** What to do for the spec: the mount path first (idempotent), then capacity (capacity.ts). */
export function decideSync(input: SyncInput): SyncAction[] {
  const actions: SyncAction[] = [];
  if (input.desiredMountPath !== undefined && input.desiredMountPath !== input.mountPath) {
    actions.push({ action: "SetMountPath", mountPath: input.desiredMountPath });
  }
  const desired = input.desiredGB;
  if (desired !== undefined && desired !== input.quotaGB) {
    actions.push(decideCapacity(input, desired));
  }
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

/** The status without conditions; without a remote record only {@link NAS_FACT_FIELDS}. */
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

/**
 * The spec fields the sync actions are about (the DriftDetected message): every action
 * but SetMountPath is a capacity one, a scale waited for too.
 */
export function nasDrift(actions: readonly SyncAction[]): string[] {
  const fields = new Set<string>();
  for (const a of actions) fields.add(a.action === "SetMountPath" ? "mountPath" : "capacityGB");
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
