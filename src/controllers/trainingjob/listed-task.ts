/**
 * A settled TrainingJob's routine poll answered from the task list (one walk per poll
 * interval shared by every job, service/list-snapshot.ts) instead of its five detail
 * reads (task, storages, pods, each pod's resource and ports). The list carries the
 * task but not its storages or pods, so a listed poll answers only while the listed
 * task implies the status the job already shows: any change of the task (its status,
 * times, execution records, resource, description) sends the job to the detail reads,
 * which refresh the storages and pods with it. Pods and storages also change without
 * the task showing it (a container restart, a port opened by someone else), so they are
 * read at least once per {@link DEFAULT_FULL_READ_INTERVAL_MS} (and after a job's first
 * look, and at the first poll after a start): with the listed task when it is the one
 * the status shows, else with a detail read of the task. A task list that leaves `env`
 * out (the owner mark and the env names of the status are in it) answers with the env
 * of the task's last detail read (`TrainingTaskOperations.listSnapshot`, the service's
 * memory of the account); until one is kept, the poll reads in detail.
 */
import { isDeepStrictEqual } from "node:util";
import type { TrainingJobStatus } from "../../crds/trainingjob.js";
import type { remoteStatus, TaskObservation } from "./remote.js";

/** How long a job's poll may be answered from the task list between two reads of its storages and pods. */
export const DEFAULT_FULL_READ_INTERVAL_MS = 60 * 60_000;

/**
 * When each task's storages and pods were last read (this process's memory; a restart
 * reads anew), and the tasks of first looks that left them for a follow-up read.
 */
export class FullReads {
  private readonly at = new Map<string, number>();
  /** A first look's task and when it was read, until the follow-up reads its parts. */
  private readonly held = new Map<string, { task: TaskObservation["task"]; at: number }>();

  constructor(
    private readonly intervalMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Notes a read of task `id`'s storages and pods. */
  record(id: string): void {
    this.at.delete(id);
    this.held.delete(id);
    this.at.set(id, this.now());
  }

  /** Forgets task `id` (deleted, or its parts to be read again). */
  forget(id: string): void {
    this.at.delete(id);
    this.held.delete(id);
  }

  /**
   * Keeps the task a first look read without its parts, so that the follow-up reads
   * only the parts (the task read seconds ago is as recent as a list walk would be).
   */
  hold(id: string, task: TaskObservation["task"]): void {
    this.forget(id);
    this.held.set(id, { task, at: this.now() });
  }

  /** The task {@link hold} kept for `id`, once (then dropped). */
  takeHeld(id: string): { task: TaskObservation["task"]; at: number } | undefined {
    const held = this.held.get(id);
    this.held.delete(id);
    return held;
  }

  /** Whether task `id` is due a read of its storages and pods: never read by this process, or too long ago. */
  due(id: string): boolean {
    const last = this.at.get(id);
    return last === undefined || this.now() - last >= this.intervalMs;
  }
}

/**
 * Whether the remote part of the status built from a listed task equals what the job
 * shows (`previous`), field by field (key order aside): only then is the listed poll
 * an answer. Storages and pods come from `previous` in a listed status, so they agree.
 */
export function listedStatusCurrent(
  listed: ReturnType<typeof remoteStatus>,
  previous: TrainingJobStatus | undefined,
): boolean {
  if (!previous) return false;
  const shown = previous as Record<string, unknown>;
  const keys = new Set([...Object.keys(listed), ...REMOTE_FIELDS]);
  for (const key of keys) {
    if (!isDeepStrictEqual((listed as Record<string, unknown>)[key], shown[key])) return false;
  }
  return true;
}

/** The status fields `remoteStatus` writes (absent ones must be absent in both). */
const REMOTE_FIELDS = [
  "remoteStatus",
  "aidcId",
  "priority",
  "createdTime",
  "startTime",
  "lastUpdateTime",
  "creator",
  "config",
  "resource",
  "execInfos",
  "storages",
  "pods",
] as const;
