/**
 * The observed part of a CciInstance's status, and its Ready condition, as pure
 * functions of what the service said.
 *
 * Where each field comes from (the list record and the detail share most fields):
 *
 * | status field | source |
 * |---|---|
 * | name, remoteStatus, remoteSubStatus, aidcId, orderInstanceId, image, urls, resource, times, auto stop/release | list record (detail when the instance is not listed) |
 * | description, priority, envKeys | list record (detail when the instance is not listed) |
 * | health (jupyter, vscode), saveImageInProgress, tenant, creator, storageSize | list record only |
 * | price, priceUnit, chargeMethod | detail only: read when the object binds and whenever the record's status or updateTime changes; kept otherwise |
 * | error | error-details, read on every poll while the status is ERROR or FAILED |
 */
import { CCI_INSTANCE_REASONS, type CciInstanceStatus } from "../../crds/cciinstance.js";
import type { OwnReason } from "../../crds/reasons.js";
import {
  type ConditionInput,
  capAddress,
  capEnvName,
  capFreeText,
  capValue,
} from "../../runtime/index.js";
import type { CciErrorDetails, CciInstance } from "../../service/schemas/cci.js";
import { exportData } from "../managed/export.js";

const R = CCI_INSTANCE_REASONS.names;

/** Remote statuses that mean the instance failed (error details are read). */
export const FAILED_STATUSES: ReadonlySet<string> = new Set(["ERROR", "FAILED"]);

/** True when the remote status is one whose error details are read. */
export function isInError(remoteStatus: string | undefined): boolean {
  return FAILED_STATUSES.has((remoteStatus ?? "").toUpperCase());
}

/** The observed fields of the status (everything but conditions, images, generation). */
export type ObservedStatus = Omit<
  CciInstanceStatus,
  "conditions" | "images" | "observedGeneration"
>;

/** What {@link observedStatus} is computed from. */
export interface Observation {
  instanceId: string;
  /** The list record, or the detail when the instance is not in the list. */
  record: CciInstance;
  /** The detail, when read in this reconcile. */
  detail?: CciInstance;
  /** Error details, when read in this reconcile (the instance is in error). */
  errorDetails?: CciErrorDetails;
  /** The previous status, to keep detail-only fields between detail reads. */
  previous?: CciInstanceStatus;
}

/** A short value of the service (an id, a name, a state, a time), cut at the status bound. */
const text = (v: string | undefined): string | undefined => (v ? capValue(v) : undefined);
/** An address of the service (an image, a URL), cut at the status bound. */
const address = (v: string | undefined): string | undefined => (v ? capAddress(v) : undefined);
/** A free text of the service (a description, an error detail), cut at the status bound. */
const freeText = (v: string | undefined): string | undefined => (v ? capFreeText(v) : undefined);

/** Drops undefined fields so that deep compares ignore them; undefined when empty. */
function compact<T extends Record<string, unknown>>(o: T): T | undefined {
  const out = Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
  return Object.keys(out).length > 0 ? (out as T) : undefined;
}

/**
 * True when the detail should be read: the object is not yet bound to this
 * instance in its status, or the instance changed (status or updateTime) since the
 * status was written. In a steady state this is false, so the list alone serves.
 */
export function needsDetail(previous: CciInstanceStatus | undefined, record: CciInstance): boolean {
  if (!previous || previous.instanceId !== record.id) return true;
  return (
    previous.remoteStatus !== text(record.status) ||
    previous.lastUpdateTime !== text(record.updateTime)
  );
}

/** How many env names the status keeps. */
export const MAX_CCI_ENV_KEYS = 128;

/**
 * The sorted names of an env map (at most {@link MAX_CCI_ENV_KEYS}, each cut at the
 * status bound), never its values; undefined when empty.
 */
function envKeys(env: Record<string, string> | undefined): string[] | undefined {
  const keys = Object.keys(env ?? {})
    .sort()
    .slice(0, MAX_CCI_ENV_KEYS)
    .map(capEnvName);
  return keys.length > 0 ? keys : undefined;
}

/** Maps what the service said to the observed status fields. */
export function observedStatus(o: Observation): ObservedStatus {
  const r = o.record;
  const samePrev = o.previous?.instanceId === o.instanceId ? o.previous : undefined;
  const resource = r.resource ?? o.detail?.resource;
  const gpuName = resource?.gpuName;
  const err = o.errorDetails;
  return compact({
    instanceId: o.instanceId,
    name: text(r.name),
    remoteStatus: text(r.status),
    remoteSubStatus: text(r.subStatus),
    aidcId: r.aidcId,
    orderInstanceId: text(r.orderInstanceId),
    image: address(r.image),
    description: freeText(r.description),
    priority: r.priority,
    // Tenant, creator and storage size are list-only, the charge method detail-only:
    // kept from before when this record lacks them.
    tenant: text(r.tenantName ?? r.tenantId) ?? samePrev?.tenant,
    creator: text(r.creatorName ?? r.createdBy) ?? samePrev?.creator,
    chargeMethod: o.detail?.chargeMethod ?? r.chargeMethod ?? samePrev?.chargeMethod,
    storageSize: r.storageSize ?? samePrev?.storageSize,
    envKeys: envKeys(r.env ?? o.detail?.env),
    urls: compact({
      webSSH: address(r.webSSHUrl),
      jupyter: address(r.jupyterUrl),
      vscode: address(r.vscodeUrl),
    }),
    // Health is a list-only field: kept from before when the record is a detail.
    health: compact({ jupyter: r.jupyterHealth, vscode: r.vscodeHealth }) ?? samePrev?.health,
    resource: resource
      ? compact({
          cpuCores: text(resource.cpuCores),
          memoryGB: text(resource.memoryGB),
          // The service writes a dash (or null) when there is no GPU.
          gpuName: gpuName && gpuName !== "-" ? text(gpuName) : undefined,
          gpuCount: text(resource.gpuCount),
          diskGB: text(resource.diskGB),
          productName: text(resource.productName),
          productCode: text(resource.productCode),
        })
      : undefined,
    createdTime: text(r.createTime),
    lastUpdateTime: text(r.updateTime),
    startTime: text(r.startTime),
    stopTime: text(r.stopTime),
    releaseTime: text(r.releaseTime),
    autoStopEnabled: r.autoStopEnable,
    autoStopTime: text(r.autoStopTime),
    autoReleaseEnabled: r.autoReleaseEnable,
    autoReleaseTime: text(r.autoReleaseTime),
    price: text(o.detail?.price ?? r.price) ?? samePrev?.price,
    priceUnit: o.detail?.priceUnit ?? r.priceUnit ?? samePrev?.priceUnit,
    saveImageInProgress: r.saveImageStatus ?? samePrev?.saveImageInProgress,
    error: err
      ? compact({
          description: freeText(err.errorDescription),
          suggestion: freeText(err.suggestion),
          detail: freeText(err.errorDetail),
          instanceStatus: text(err.instanceStatus),
          instanceSubStatus: text(err.instanceSubStatus),
        })
      : undefined,
  }) as ObservedStatus;
}

/** Ready=False reasons by remote status (anything else unusable is `Unavailable`). */
const NOT_READY_REASON: Record<string, OwnReason> = {
  PENDING: R.Pending,
  STOPPED: R.Stopped,
  RELEASING: R.Releasing,
};

/**
 * The Ready condition: True only when the instance is RUNNING. ERROR and FAILED give
 * reason `InstanceFailed` (terminal: Argo CD shows Degraded) with the error
 * description and suggestion in the message.
 */
export function readyCondition(status: ObservedStatus): ConditionInput {
  const remote = (status.remoteStatus ?? "").toUpperCase();
  const sub = status.remoteSubStatus ? ` (${status.remoteSubStatus})` : "";
  if (remote === "RUNNING") {
    return { type: "Ready", status: "True", reason: R.Running, message: "the instance is RUNNING" };
  }
  if (isInError(remote)) {
    const e = status.error;
    const parts = [
      `the instance is ${status.remoteStatus}${sub}`,
      e?.description,
      e?.suggestion ? `suggestion: ${e.suggestion}` : undefined,
    ].filter(Boolean);
    return { type: "Ready", status: "False", reason: R.InstanceFailed, message: parts.join(": ") };
  }
  if (!remote) {
    return {
      type: "Ready",
      status: "Unknown",
      reason: R.StatusUnknown,
      message: "the service gave no status for the instance",
    };
  }
  return {
    type: "Ready",
    status: "False",
    reason: NOT_READY_REASON[remote] ?? "Unavailable",
    message: `the instance is ${status.remoteStatus}${sub}`,
  };
}

/** The key of an error, to emit its Warning event once per distinct error. */
export function errorKey(error: ObservedStatus["error"]): string | undefined {
  if (!error) return undefined;
  return JSON.stringify([
    error.instanceStatus,
    error.instanceSubStatus,
    error.description,
    error.detail,
  ]);
}

/**
 * The connection details of `spec.exportTo`: CCI_INSTANCE_ID and the access addresses
 * the instance has (WEBSSH_URL, JUPYTER_URL, VSCODE_URL).
 */
export function cciExport(status: CciInstanceStatus): Record<string, string> {
  return exportData({
    CCI_INSTANCE_ID: status.instanceId,
    WEBSSH_URL: status.urls?.webSSH,
    JUPYTER_URL: status.urls?.jupyter,
    VSCODE_URL: status.urls?.vscode,
  });
}
