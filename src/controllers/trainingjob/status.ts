/**
 * The TrainingJob status from what the generic loop knows (the create protocol's
 * facts) and the remote record, and its Succeeded and PodsObserved conditions. Pure.
 */
import type { AddressAllowList } from "../../config/cidr.js";
import {
  TRAINING_JOB_REASONS,
  type TrainingJobPhase,
  type TrainingJobStatus,
} from "../../crds/trainingjob.js";
import type { ConditionInput } from "../../runtime/object-writes.js";
import type { ManagedFacts, ReadyState } from "../managed/call.js";
import { exportData } from "../managed/export.js";
import { serviceNameFor } from "./expose.js";
import type { TrainingJobObject, TrainingJobRemote } from "./objects.js";
import { classifyTaskStatus, phaseOf, type TaskStatusTable } from "./status-class.js";

const R = TRAINING_JOB_REASONS.names;

/**
 * The status fields of a TrainingJob that come from the facts (and the pods, whose
 * Service names follow the exposure settings): written anew on every status write;
 * the loop keeps the others when nothing was read (managed/reconciler.ts).
 */
export const TRAINING_JOB_FACT_FIELDS = [
  "phase",
  "taskId",
  "subscriptionKey",
  "subscription",
  "pods",
] as const;

/** The phase when no remote record was read in this reconcile. */
export function phaseWithoutRemote(
  facts: ManagedFacts,
  previous: TrainingJobPhase | undefined,
): TrainingJobPhase {
  if (facts.subscription?.outcome === "Failed") return "Failed";
  if (facts.externalId) return previous ?? "Unknown";
  if (facts.subscriptionKey || facts.subscription?.outcome === "Pending") return "Creating";
  return "Pending";
}

/** Adds `serviceName` to the custom ports that have a Service (spec.exposePorts). */
function withServiceNames(
  job: TrainingJobObject,
  pods: TrainingJobStatus["pods"],
  addresses: AddressAllowList,
) {
  if (!job.spec.exposePorts || !pods) return pods;
  const jobName = job.metadata?.name ?? "";
  return pods.map((pod) => ({
    ...pod,
    ...(pod.ports
      ? {
          ports: pod.ports.map((p) =>
            p.custom &&
            p.externalHost &&
            p.externalPort !== undefined &&
            addresses.allows(p.externalHost)
              ? { ...p, serviceName: serviceNameFor(jobName, pod.name, p.port) }
              : p,
          ),
        }
      : {}),
  }));
}

/**
 * The kind's status (conditions and observedGeneration aside): identity and create
 * progress from `facts`, the remote part from `remote`; when nothing was read in this
 * reconcile, only {@link TRAINING_JOB_FACT_FIELDS}, the pods from the previous status.
 */
export function trainingJobStatus(
  job: TrainingJobObject,
  facts: ManagedFacts,
  remote: TrainingJobRemote | undefined,
  statusClasses: TaskStatusTable = {},
  /**
   * The allowed external addresses when exposure is enabled in the operator: only then,
   * and only for an allowed address, does a port name its Service.
   */
  exposure?: AddressAllowList,
): Record<string, unknown> {
  const base: Record<string, unknown> = remote
    ? { ...remote.status }
    : { ...(job.status?.pods ? { pods: job.status.pods } : {}) };
  const phase = remote
    ? phaseOf(classifyTaskStatus(remote.status.remoteStatus, statusClasses))
    : phaseWithoutRemote(facts, job.status?.phase);
  const pods = exposure
    ? withServiceNames(job, base.pods as TrainingJobStatus["pods"], exposure)
    : (base.pods as TrainingJobStatus["pods"]);
  return {
    ...base,
    ...(pods ? { pods } : {}),
    phase,
    ...(facts.externalId ? { taskId: facts.externalId } : {}),
    ...(facts.subscriptionKey ? { subscriptionKey: facts.subscriptionKey } : {}),
    ...(facts.subscription ? { subscription: facts.subscription } : {}),
  };
}

/**
 * Succeeded, written once the task finished (as a Job's Complete and Failed): True
 * with TaskSucceeded, False with TaskFailed; nothing while the task has not finished,
 * so `kubectl wait --for=condition=Succeeded` waits for the end of a task.
 */
export function succeededCondition(ready: ReadyState): ConditionInput[] {
  if (ready.reason === R.TaskSucceeded || ready.reason === R.TaskFailed) {
    const status = ready.reason === R.TaskSucceeded ? "True" : "False";
    return [{ type: "Succeeded", status, reason: ready.reason, message: ready.message }];
  }
  return [];
}

/** Type of the condition that says what the status leaves out of the pods. */
export const PODS_OBSERVED = "PodsObserved";

/** The message of PodsObserved=False `PodsNotYetRead` (the first look at a task). */
export const PODS_NOT_YET_READ =
  "the task was read, its storages and pods not yet: they are read in a follow-up poll soon";

/**
 * The PodsObserved condition of an observation: False `PodsNotYetRead` after the
 * first look at a task (only the task read; storages and pods follow, task-parts.ts);
 * False `PodOperationMissing` with the note when the service does not answer a pod
 * operation (pods or parts of them left out of the status; the task itself is
 * observed and may be Ready); removed when the pods were read in full; undefined
 * (unchanged) when nothing was observed or the task was read from the list (pods not
 * read).
 */
export function podsObservedCondition(
  remote: TrainingJobRemote | undefined,
): ConditionInput | { type: string; remove: true } | undefined {
  if (!remote || remote.observation.fromList) return undefined;
  if (remote.observation.partsDeferred) {
    return {
      type: PODS_OBSERVED,
      status: "False",
      reason: R.PodsNotYetRead,
      message: PODS_NOT_YET_READ,
    };
  }
  const note = remote.observation.note;
  if (!note) return { type: PODS_OBSERVED, remove: true };
  return { type: PODS_OBSERVED, status: "False", reason: R.PodOperationMissing, message: note };
}

/**
 * The connection details of `spec.exportTo`: TASK_ID and, per pod (by name order, from
 * 0), POD_<i>_NAME and POD_<i>_PORT_<port> = host:port for each open port with an
 * external address.
 */
export function trainingJobExport(status: Record<string, unknown>): Record<string, string> {
  const s = status as TrainingJobStatus;
  const values: Record<string, unknown> = { TASK_ID: s.taskId };
  const pods = [...(s.pods ?? [])].sort((a, b) => a.name.localeCompare(b.name));
  pods.forEach((pod, i) => {
    values[`POD_${i}_NAME`] = pod.name;
    for (const p of pod.ports ?? []) {
      if (p.externalHost && p.externalPort !== undefined) {
        values[`POD_${i}_PORT_${p.port}`] = `${p.externalHost}:${p.externalPort}`;
      }
    }
  });
  return exportData(values);
}
