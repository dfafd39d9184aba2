/**
 * Wire shapes of emulated resources, as the spec describes them. Deliberately uses
 * both timestamp formats (tasks and CCI `YYYY-MM-DD HH:MM:SS`, NAS ISO 8601 with `Z`),
 * numbers as strings where the spec says string, and the Java-style `empty` flag in
 * maps, so that clients meet the variants the real service shows.
 */
import { toServiceTimestamp } from "../service/timestamps.js";
import type { FileSystemRecord, MountRecord } from "./file-systems.js";
import { containerStatusFor } from "./pods.js";
import type {
  CciRecord,
  NasRecord,
  PodRecord,
  PortRecord,
  SubscriptionRecord,
  TaskRecord,
  TemplateRecord,
} from "./records.js";
import type { EmulatorState, SubscriptionResultShape } from "./state.js";

const naive = (ms: number | undefined): string =>
  ms === undefined ? "" : toServiceTimestamp(new Date(ms));
const iso = (ms: number): string => new Date(ms).toISOString();

/** A NAS instance record. */
export function nasView(n: NasRecord): Record<string, unknown> {
  return {
    id: n.id,
    name: n.name,
    description: n.description,
    orderInstanceId: n.orderInstanceId,
    status: n.status,
    storageType: n.storageType,
    quota: String(n.quotaGB),
    used: String(n.usedGB),
    mountPath: n.mountPath,
    resource: { quota: String(n.quotaGB), productName: n.productName, productCode: n.productCode },
    createdTime: iso(n.createdAt),
    lastUpdateTime: iso(n.updatedAt),
    releaseTime: null,
    tenantId: n.tenantId,
    price: "0.30",
    priceUnit: 2,
    currencyUnitOfMeasure: 1,
    currencyUnitPriceFormula: "capacity * price",
    sharePolicy: { policy: "tenant" },
    createdBy: "user-0001",
    createdByName: "Emulated User",
    lastUpdateBy: "user-0001",
    lastUpdateByName: "Emulated User",
    createScene: "",
    createSceneInstanceId: "",
    isDefaultStorage: false,
    aidcId: n.aidcId,
  };
}

/** A mount of a file system. */
export function mountView(m: MountRecord): Record<string, unknown> {
  return {
    id: m.id,
    instanceId: m.instanceId,
    mountPath: m.mountPath ?? null,
    status: m.status,
    address: m.address,
    createdTime: naive(m.createdAt),
  };
}

/** A file system, with its mounts (detail and list alike). */
export function fileSystemView(fs: FileSystemRecord): Record<string, unknown> {
  return {
    id: fs.id,
    name: fs.name,
    description: fs.description,
    sizeGB: fs.sizeGB,
    type: fs.type,
    protocol: fs.protocol,
    status: fs.status,
    aidcId: fs.aidcId,
    createdTime: naive(fs.createdAt),
    mounts: [...fs.mounts.values()].map(mountView),
  };
}

/** A training task as the detail (and the task list) returns it. */
export function taskView(t: TaskRecord, state: EmulatorState): Record<string, unknown> {
  const product = state.trainingProducts.find((p) => p.productCode === t.productCode);
  return {
    id: t.id,
    name: t.name,
    desc: t.desc,
    createType: t.createType,
    trainingType: t.trainingType,
    trainingFramwork: t.trainingFramework,
    imageType: t.imageType,
    priority: t.priority,
    image: t.image,
    aidcId: t.aidcId,
    storageConfigs: t.storageConfigs.map((c) => {
      const nas = state.nas.get(c.storageId);
      return {
        ...(nas ? nasView(nas) : { id: c.storageId }),
        storageId: c.storageId,
        fileDirectory: c.fileDirectory ?? "",
        mountPath: c.mountPath ?? nas?.mountPath ?? "",
        onlyRead: c.onlyRead ?? true,
      };
    }),
    env: { ...t.env, empty: Object.keys(t.env).length === 0 },
    enableAutoRetry: t.enableAutoRetry,
    maxRetryCount: t.maxRetryCount,
    enableTimeoutCancel: t.enableTimeoutCancel,
    timeoutHours: t.timeoutHours,
    startCommand: t.startCommand,
    resource: {
      type: "worker",
      gpuName: product?.gpuName ?? "-",
      cpuCores: product?.cpuCores ?? "",
      gpuCount: product?.gpuCount ?? "0",
      memoryGB: product?.memoryGB ?? "",
      productName: product?.name ?? "",
      productCode: t.productCode,
      workerCount: t.workerCount,
      productPrice: product?.price ?? "",
      empty: false,
    },
    createdBy: "user-0001",
    creatorName: "Emulated User",
    createdTime: naive(t.createdAt),
    startTime: naive(t.startedAt),
    lastUpdateTime: naive(t.updatedAt),
    status: t.status,
    source: t.createType,
    execInfos: t.execInfos.map((e) => ({
      trainingTaskId: t.id,
      status: e.status,
      info: e.info,
      createTime: naive(e.at),
    })),
  };
}

/** A pod of the assumed pod list. */
export function podListItemView(t: TaskRecord, p: PodRecord): Record<string, unknown> {
  return {
    podName: p.podName,
    status: t.status === "RUNNING" ? "Running" : t.status === "PENDING" ? "Pending" : "Terminated",
    role: p.role,
    ip: p.ip,
    nodeName: p.nodeName,
    createTime: naive(p.createdAt),
  };
}

/** The resource detail of a pod: containers and volumes. */
export function podResourceView(
  t: TaskRecord,
  p: PodRecord,
  state: EmulatorState,
): Record<string, unknown> {
  return {
    containers: p.containers.map((c) => ({
      containerName: c.containerName,
      status: t.status === "RUNNING" ? c.status : containerStatusFor(t.status),
      reason: c.reason,
      restartCount: c.restartCount,
      targetPort: [...p.systemPorts, ...p.customPorts].map((port) => port.port),
      podWebSSH: c.podWebSSH,
    })),
    volumes: t.storageConfigs.map((c) => {
      const nas = state.nas.get(c.storageId);
      return {
        nasName: nas?.name ?? c.storageId,
        nasType: c.storageType ?? nas?.storageType ?? "",
        mountPath: c.mountPath ?? nas?.mountPath ?? "",
        readOnly: c.onlyRead ?? true,
        path: c.fileDirectory ?? "/",
      };
    }),
  };
}

/** One open port on the wire; system ports carry no protocol. */
export function portView(p: PortRecord): Record<string, unknown> {
  return {
    ...(p.protocol === undefined ? {} : { protocol: p.protocol }),
    port: p.port,
    externalHost: p.externalHost,
    externalPort: p.externalPort,
  };
}

/** The open ports of a pod. */
export function podPortsView(p: PodRecord): Record<string, unknown> {
  return { ports: p.systemPorts.map(portView), customPorts: p.customPorts.map(portView) };
}

/** A template of the assumed template list: its wire fields plus id and times. */
export function templateView(t: TemplateRecord): Record<string, unknown> {
  return {
    ...t.fields,
    id: t.id,
    createdTime: naive(t.createdAt),
    lastUpdateTime: naive(t.updatedAt),
  };
}

/** The canonical subscription result (docs/service-assumptions.md). */
export function subscriptionView(s: SubscriptionRecord): Record<string, unknown> {
  if (!s.resolved) return { key: s.key, state: "Pending" };
  return {
    key: s.key,
    state: s.outcome,
    ...(s.outcome === "Succeeded" && s.instanceId ? { instanceId: s.instanceId } : {}),
    ...(s.message ? { message: s.message } : {}),
  };
}

const INTEGER_STATES = { Pending: 1, Succeeded: 2, Failed: 3 } as const;
const RENAMED_STATES = { Pending: "PENDING", Succeeded: "DONE", Failed: "FAILED" } as const;

/** A subscription result in `shape` (see EmulatorBehaviour.subscriptionResultShape). */
export function subscriptionResultView(
  s: SubscriptionRecord,
  shape: SubscriptionResultShape,
): Record<string, unknown> {
  const canonical = subscriptionView(s) as { state: keyof typeof INTEGER_STATES };
  if (shape === "canonical") return canonical;
  const { key, state, instanceId, message } = canonical as typeof canonical & {
    key: string;
    instanceId?: string;
    message?: string;
  };
  if (shape === "integerStatus") {
    return {
      key,
      status: INTEGER_STATES[state],
      ...(instanceId ? { instanceId } : {}),
      ...(message ? { message } : {}),
    };
  }
  return {
    orderKey: key,
    orderState: RENAMED_STATES[state],
    ...(instanceId ? { createdResourceId: instanceId } : {}),
    ...(message ? { remark: message } : {}),
  };
}

const DETAIL_ONLY = ["instanceMor", "productId", "price", "priceUnit", "chargeMethod"];
const LIST_ONLY = [
  "tenantId",
  "tenantName",
  "createdBy",
  "creatorName",
  "jupyterHealth",
  "vscodeHealth",
  "storageSize",
  "bundle",
];

/** A CCI list record (`detail` false) or detail (`detail` true). */
export function cciView(
  c: CciRecord,
  state: EmulatorState,
  detail: boolean,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const skip = detail ? LIST_ONLY : DETAIL_ONLY;
  for (const [k, v] of Object.entries(c.fields)) if (!skip.includes(k)) out[k] = v;
  if (detail) {
    out.cciResource = c.fields.resource;
  } else {
    out.now = naive(state.now());
    out.saveImageStatus = state.now() < c.savingImageUntil;
  }
  return out;
}
