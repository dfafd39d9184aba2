/**
 * How a remote task status is read: the service documents only `RUNNING`, so the
 * other words are classified by a table the operator configuration may extend or
 * override. The class decides the phase (the STATUS column) and the Ready condition.
 */
import { TRAINING_JOB_REASONS, type TrainingJobPhase } from "../../crds/trainingjob.js";
import type { ReadyState } from "../managed/call.js";

const R = TRAINING_JOB_REASONS.names;

/** What a remote task status means to the operator. */
export type TaskStatusClass = "pending" | "running" | "succeeded" | "failed" | "stopped";

/** Remote status word (any case) → class. */
export type TaskStatusTable = Readonly<Record<string, TaskStatusClass>>;

/**
 * The default classification. Words are matched ignoring case, `_`, `-` and spaces, so
 * `Running`, `running` and `RUNNING` are one entry.
 */
export const DEFAULT_TASK_STATUS_TABLE: TaskStatusTable = {
  PENDING: "pending",
  QUEUING: "pending",
  QUEUED: "pending",
  WAITING: "pending",
  SUBMITTED: "pending",
  CREATING: "pending",
  INIT: "pending",
  INITIALIZING: "pending",
  STARTING: "pending",
  SCHEDULING: "pending",
  RESTARTING: "pending",
  RETRYING: "pending",
  RUNNING: "running",
  SUCCEEDED: "succeeded",
  SUCCESS: "succeeded",
  COMPLETED: "succeeded",
  FINISHED: "succeeded",
  FAILED: "failed",
  ERROR: "failed",
  TIMEOUT: "failed",
  STOPPED: "stopped",
  STOPPING: "stopped",
  CANCELLED: "stopped",
  CANCELED: "stopped",
  TERMINATED: "stopped",
};

function fold(word: string): string {
  return word.toLowerCase().replace(/[\s_-]/g, "");
}

/**
 * The class of `remoteStatus` under `table` (entries of `overrides` win over the
 * defaults); undefined for an empty or unknown word.
 */
export function classifyTaskStatus(
  remoteStatus: string | undefined,
  overrides: TaskStatusTable = {},
): TaskStatusClass | undefined {
  if (!remoteStatus?.trim()) return undefined;
  const folded = fold(remoteStatus);
  for (const table of [overrides, DEFAULT_TASK_STATUS_TABLE]) {
    for (const [word, cls] of Object.entries(table)) if (fold(word) === folded) return cls;
  }
  return undefined;
}

const PHASE: Record<TaskStatusClass, TrainingJobPhase> = {
  pending: "Starting",
  running: "Running",
  succeeded: "Succeeded",
  failed: "Failed",
  stopped: "Stopped",
};

/** The phase of an existing task with class `cls` (Unknown for an unclassified word). */
export function phaseOf(cls: TaskStatusClass | undefined): TrainingJobPhase {
  return cls ? PHASE[cls] : "Unknown";
}

/**
 * The Ready condition of an existing task. Ready means "the task is running, or it
 * finished successfully" (the Succeeded condition tells the two apart). A failed
 * task's reason (`TaskFailed`) is terminal and carries the newest execution record's
 * text, so the service's failure message shows in `kubectl describe` and Argo CD.
 */
export function readyOf(
  cls: TaskStatusClass | undefined,
  remoteStatus: string | undefined,
  lastInfo: string | undefined,
): ReadyState {
  const said = lastInfo?.trim() ? `: ${lastInfo.trim()}` : "";
  switch (cls) {
    case "running":
      return { status: "True", reason: R.TaskRunning, message: "the task is running" };
    case "pending":
      return {
        status: "False",
        reason: R.TaskStarting,
        message: `the task is ${remoteStatus}${said}`,
      };
    case "succeeded":
      // Ready=True: the task did what the spec asked, so kstatus (Flux, kpt) and
      // `kubectl wait --for=condition=Ready` read a finished job as done.
      return { status: "True", reason: R.TaskSucceeded, message: `the task finished${said}` };
    case "failed":
      return {
        status: "False",
        reason: R.TaskFailed,
        message: `the task is ${remoteStatus}${said}`,
      };
    case "stopped":
      return {
        status: "False",
        reason: R.TaskStopped,
        message: `the task is ${remoteStatus}${said}`,
      };
    default:
      return {
        status: "Unknown",
        reason: R.UnknownTaskStatus,
        message: remoteStatus?.trim()
          ? `the service reports task status "${remoteStatus}", which the operator does not know; map it in the operator configuration (trainingJob.statusClasses)`
          : "the service reports no task status",
      };
  }
}
