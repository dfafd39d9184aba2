/**
 * The remote state of a TrainingJob's task as one record, and its mapping into the
 * TrainingJob status. Pure: the calls that fill a {@link TaskObservation} are in
 * external.ts.
 */

import {
  type ExecInfo,
  MAX_ENV_KEYS,
  MAX_START_COMMAND_CHARS,
  type MountedStorage,
  type PodPort,
  type TaskConfig,
  type TrainingJobStatus,
  type TrainingPod,
  type TrainingResource,
} from "../../crds/trainingjob.js";
import {
  capAddress,
  capEnvName,
  capFreeText,
  capText,
  capValue,
} from "../../runtime/object-writes.js";
import type { NasInstance, PodOpenPorts, PodResource, TrainingTask } from "../../service/index.js";
import { stripClientTokenMarker } from "../../service/index.js";
import { MAX_POD_LIST, MAX_POD_PORTS, podsWithinBudget } from "./pod-budget.js";

/** What was read about one pod: absent parts could not be read (the previous status stays). */
export interface PodObservation {
  podName: string;
  resource?: PodResource;
  ports?: PodOpenPorts;
  /**
   * Parts the service has no operation for: left out of the status, never carried over
   * from the previous one (a part merely unread this time keeps its previous value).
   */
  omitted?: ("resource" | "ports")[];
}

/** Everything read about a task in one poll. */
export interface TaskObservation {
  task: TrainingTask;
  /** undefined when the storages could not be read this time. */
  storages?: NasInstance[];
  /** undefined when the pod list could not be read this time (the previous pods stay). */
  pods?: PodObservation[];
  /**
   * The service has no pod list (disabled, or not answered): pods are left out of the
   * status, not carried over from a previous one.
   */
  podsOmitted?: boolean;
  /** What the status leaves out and why (an operation the service does not answer). */
  note?: string;
  /**
   * Read from the task list (listed-task.ts): storages and pods were not read, so the
   * previous status keeps them, and what it says about the pods (PodsObserved).
   */
  fromList?: boolean;
  /**
   * The first look at the task (listed-task.ts, `firstLookDefers`): only the task was
   * read, what Ready needs; storages and pods are read in a follow-up look soon after.
   * The status leaves them out (never carried over from a previous status, which may
   * be another task's) and PodsObserved says they are not read yet.
   */
  partsDeferred?: boolean;
}

/** How many execution records the status keeps (the newest). */
export const MAX_EXEC_INFOS = 20;
/** How many mounted storages the status keeps (by id; a job mounts at most 16). */
export const MAX_STORAGES = 32;

/** Maps the task's resource object into the status's (only the fields it has). */
export function resourceStatus(task: TrainingTask): TrainingResource | undefined {
  const r = task.resource;
  if (!r) return undefined;
  return compact({
    type: capValue(r.type),
    productCode: capValue(r.productCode),
    productName: capValue(r.productName),
    cpuCores: capValue(r.cpuCores),
    memoryGB: capValue(r.memoryGB),
    gpuName: capValue(r.gpuName),
    gpuCount: capValue(r.gpuCount),
    workerCount: r.workerCount,
    productPrice: capValue(r.productPrice),
  });
}

/** What a task or a template record stores of its configuration. */
export type StoredTrainingConfig = Pick<
  TrainingTask,
  | "name"
  | "image"
  | "imageType"
  | "trainingType"
  | "trainingFramework"
  | "resource"
  | "priority"
  | "startCommand"
  | "enableAutoRetry"
  | "maxRetryCount"
  | "enableTimeoutCancel"
  | "timeoutHours"
  | "env"
> &
  Partial<Pick<TrainingTask, "createType" | "templateId" | "sourceTaskId">>;

/**
 * The configuration a task (or a template) stores, bounded: the start command cut at
 * {@link MAX_START_COMMAND_CHARS}, at most {@link MAX_ENV_KEYS} env names and never a
 * value, every other string at its bound of runtime/object-writes.ts.
 */
export function configStatus(task: StoredTrainingConfig): TaskConfig {
  const envKeys = Object.keys(task.env ?? {})
    .sort()
    .slice(0, MAX_ENV_KEYS)
    .map(capEnvName);
  const sourceId = task.createType === "COPY" ? task.sourceTaskId : task.templateId;
  const source = compact({
    type: task.createType,
    ...(task.createType === "DIRECT" ? {} : { id: capValue(sourceId) }),
  });
  // A template has no source: only a task record names how it was created.
  return compact({
    name: capValue(task.name),
    ...(Object.keys(source).length > 0 ? { source } : {}),
    image: capAddress(task.image),
    imageType: capValue(task.imageType),
    trainingType: capValue(task.trainingType),
    trainingFramework: capValue(task.trainingFramework),
    productCode: capValue(task.resource?.productCode),
    workerCount: task.resource?.workerCount,
    priority: task.priority,
    startCommand: capText(task.startCommand, MAX_START_COMMAND_CHARS),
    enableAutoRetry: task.enableAutoRetry,
    maxRetryCount: task.maxRetryCount,
    enableTimeoutCancel: task.enableTimeoutCancel,
    timeoutHours: task.timeoutHours,
    ...(envKeys.length > 0 ? { envKeys } : {}),
  });
}

/** The newest {@link MAX_EXEC_INFOS} execution records, oldest first. */
export function execInfosStatus(task: TrainingTask): ExecInfo[] | undefined {
  const infos = task.execInfos;
  if (!infos) return undefined;
  const sorted = [...infos].sort((a, b) => (a.createTime ?? "").localeCompare(b.createTime ?? ""));
  return sorted.slice(-MAX_EXEC_INFOS).map((e) =>
    compact({
      status: capValue(e.status),
      info: capFreeText(e.info),
      createTime: capValue(e.createTime),
    }),
  );
}

/** The newest execution record's text, for condition messages. */
export function lastExecInfo(task: TrainingTask): string | undefined {
  return execInfosStatus(task)?.at(-1)?.info;
}

function toNumber(v: string | undefined): number | undefined {
  if (v === undefined || v.trim() === "") return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

/** A mounted storage of the task in the status's shape. */
export function storageStatus(s: NasInstance): MountedStorage {
  return compact({
    storageId: s.id,
    name: capValue(s.name),
    storageType: capValue(s.storageType),
    status: capValue(s.status),
    mountPath: capAddress(s.mountPath),
    quotaGB: toNumber(s.quota ?? s.resource?.quota),
    usedGB: toNumber(s.used),
  });
}

/** The open ports of a pod (system first, then custom), by port number within each group. */
export function podPortsStatus(ports: PodOpenPorts): PodPort[] {
  const one = (custom: boolean) => (p: PodOpenPorts["ports"][number]) =>
    compact({
      port: p.port,
      protocol: capValue(p.protocol),
      custom,
      externalHost: capValue(p.externalHost),
      externalPort: p.externalPort,
    }) as PodPort;
  const byPort = (a: { port: number }, b: { port: number }) => a.port - b.port;
  return [
    ...[...ports.ports].sort(byPort).map(one(false)),
    ...[...ports.customPorts].sort(byPort).map(one(true)),
  ].slice(0, MAX_POD_PORTS);
}

/** One pod in the status's shape; `previous` fills the parts that could not be read now. */
export function podStatus(p: PodObservation, previous: TrainingPod | undefined): TrainingPod {
  const pod: TrainingPod = { name: capValue(p.podName) };
  const kept = (part: "resource" | "ports") => !p.omitted?.includes(part);
  const containers = p.resource
    ? p.resource.containers.slice(0, MAX_POD_LIST).map((c) =>
        compact({
          name: capValue(c.containerName),
          status: capValue(c.status),
          reason: capValue(c.reason),
          restartCount: c.restartCount,
          targetPorts: c.targetPort?.slice(0, MAX_POD_PORTS),
          webSSH: capAddress(c.podWebSSH),
        }),
      )
    : kept("resource")
      ? previous?.containers
      : undefined;
  const volumes = p.resource
    ? p.resource.volumes.slice(0, MAX_POD_LIST).map((v) =>
        compact({
          name: capValue(v.nasName),
          type: capValue(v.nasType),
          mountPath: capValue(v.mountPath),
          readOnly: v.readOnly,
          path: capValue(v.path),
        }),
      )
    : kept("resource")
      ? previous?.volumes
      : undefined;
  const ports = p.ports ? podPortsStatus(p.ports) : kept("ports") ? previous?.ports : undefined;
  if (containers) pod.containers = containers;
  if (volumes) pod.volumes = volumes;
  if (ports) pod.ports = ports;
  return pod;
}

/**
 * The remote part of the status from an observation. Parts not read in this poll
 * (storages, pods, a pod's ports) keep their previous value from `previous`.
 */
export function remoteStatus(
  obs: TaskObservation,
  previous: TrainingJobStatus | undefined,
): Partial<TrainingJobStatus> {
  const { task } = obs;
  const prevPods = new Map((previous?.pods ?? []).map((p) => [p.name, p]));
  const observed = obs.pods
    ? [...obs.pods]
        .sort((a, b) => a.podName.localeCompare(b.podName))
        .map((p) => podStatus(p, prevPods.get(capValue(p.podName))))
    : obs.podsOmitted || obs.partsDeferred
      ? undefined
      : previous?.pods;
  const pods = observed && podsWithinBudget(observed);
  const storages = obs.storages
    ? [...obs.storages]
        .sort((a, b) => a.id.localeCompare(b.id))
        .slice(0, MAX_STORAGES)
        .map(storageStatus)
    : obs.partsDeferred
      ? undefined
      : previous?.storages;
  return compact({
    remoteStatus: capValue(task.status),
    aidcId: task.aidcId,
    priority: task.priority,
    createdTime: capValue(task.createdTime),
    startTime: capValue(task.startTime),
    lastUpdateTime: capValue(task.lastUpdateTime),
    creator: capValue(task.creatorName ?? task.createdBy),
    config: nonEmpty(configStatus(task)),
    resource: resourceStatus(task),
    execInfos: execInfosStatus(task),
    storages,
    pods,
  });
}

/** The task's description as the user wrote it (without a token marker, if one got in). */
export function remoteDescription(task: TrainingTask): string {
  return stripClientTokenMarker(task.desc ?? "");
}

/** `o`, or undefined when it has no field. */
function nonEmpty<T extends object>(o: T): T | undefined {
  return Object.keys(o).length > 0 ? o : undefined;
}

/** `o` without its undefined and empty-string fields (the status schema has no empties). */
export function compact<T extends object>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined && v !== "") out[k] = v;
  return out as T;
}
