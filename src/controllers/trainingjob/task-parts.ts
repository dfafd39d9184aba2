/**
 * What a TrainingJob's observe reads besides the task: its storages and its pods (the
 * pod list, then each pod's resource and open ports), and when the first look at a
 * task leaves them for a follow-up look. A new job needs only the task to be Ready
 * (its status word, status-class.ts), so its first look reads the task alone and the
 * storages and pods follow soon after in a follow-up look (the loop's `partial`
 * observation): a created job costs the create, its subscription result and one read
 * before Ready, instead of five reads more for a task with one pod.
 */
import {
  EndpointDisabledError,
  type EndpointName,
  endpointConfigKey,
  ServiceNotFoundError,
  ServiceOperationMissingError,
  type TrainingPod,
} from "../../service/index.js";
import type { TrainingPodOperations } from "../../service/kinds/trainingjob.pods.js";
import type { TrainingJobObject } from "./objects.js";
import type { PodObservation } from "./remote.js";

/**
 * Whether the observation of task `id` may leave the storages and pods for a follow-up
 * look: the job's status does not show the task yet (its first look, right after the
 * create bound it), and no decision of this reconcile needs the pods (no `spec.ports`
 * to open or close, no `spec.exposePorts` to check).
 */
export function firstLookDefers(job: TrainingJobObject, id: string): boolean {
  return job.status?.taskId !== id && job.spec.ports === undefined && job.spec.exposePorts !== true;
}

function isDisabled(err: unknown): boolean {
  return err instanceof EndpointDisabledError;
}

/**
 * The pods of task `id`. A pod list the service does not answer (disabled, or a bare
 * 404) leaves pods out with a note naming the config key, and so does a pod detail or
 * port list it does not answer for that part: the task is still observed.
 */
export async function observePods(
  ops: TrainingPodOperations,
  id: string,
): Promise<{ pods?: PodObservation[]; note?: string }> {
  let pods: TrainingPod[];
  try {
    pods = await ops.list(id);
  } catch (err) {
    if (isDisabled(err) || err instanceof ServiceOperationMissingError) {
      return { note: podsNote("listPods", err) };
    }
    throw err;
  }
  const notes = new Set<string>();
  /** A part of a pod, or undefined when the service has no operation for it. */
  const part = async <V>(name: EndpointName, read: () => Promise<V>): Promise<V | undefined> => {
    try {
      return await read();
    } catch (err) {
      if (!(err instanceof ServiceOperationMissingError)) throw err;
      notes.add(podsNote(name, err));
      return undefined;
    }
  };
  const observed = await Promise.all(
    pods.map(async (p): Promise<PodObservation | undefined> => {
      try {
        const [resource, ports] = await Promise.all([
          part("getPodResource", () => ops.resource(id, p.podName)),
          part("listPodOpenPorts", () => ops.openPorts(id, p.podName)),
        ]);
        const omitted = [
          ...(resource ? [] : (["resource"] as const)),
          ...(ports ? [] : (["ports"] as const)),
        ];
        return {
          podName: p.podName,
          ...(resource ? { resource } : {}),
          ...(ports ? { ports } : {}),
          ...(omitted.length > 0 ? { omitted } : {}),
        };
      } catch (err) {
        // A pod that went away between the list and its detail is simply not there.
        if (err instanceof ServiceNotFoundError) return undefined;
        throw err;
      }
    }),
  );
  return {
    pods: observed.filter((p): p is PodObservation => p !== undefined),
    ...(notes.size > 0 ? { note: [...notes].join("; ") } : {}),
  };
}

/** The note of a pod operation the service does not answer. */
function podsNote(operation: EndpointName, err: unknown): string {
  const why = isDisabled(err) ? "is disabled" : "is not answered by the service";
  return `${operation} ${why}, so the status leaves that part of the pods out; set its path with ${endpointConfigKey(operation)}`;
}
