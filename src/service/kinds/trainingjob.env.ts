/**
 * A training task's env on a task list that may leave it out (the spec does not show
 * whether the list carries it; the emulator's `listsOmitEnv`). The client token and the
 * owner mark travel in the env, so a task listed without it gets the env its last detail
 * read showed, from one memory per account (`KindListState.details`, list-details.ts): a
 * task's env never changes (the spec's only task update is the description). Every
 * detail read of a task keeps its env there (`TrainingTaskOperations.get`); the token
 * walks read in detail each task listed without env that nothing is kept for, the
 * routine list snapshot reads none (the poll of a task not known reads it in detail).
 */
import { ServiceNotFoundError } from "../errors.js";
import type { ListDetails } from "../list-details.js";
import type { PageWalkEnd } from "../pagination.js";
import type { TrainingTask } from "../schemas/training.js";

/**
 * `task` as listed or, listed without env, with the env its last detail read showed: an
 * empty one when that detail showed none (the status then names no env and no owner
 * mark, as from the detail); without env while no detail read is kept.
 */
export function withKnownEnv(details: ListDetails<TrainingTask>, task: TrainingTask): TrainingTask {
  if (task.env) return task;
  details.lacking();
  const kept = details.get(task.id);
  return kept ? { ...task, env: kept.env ?? {} } : task;
}

/**
 * The tasks of `walk`, each with its env: one listed without it gets the env kept for
 * it, else the one its detail shows (`read`, which keeps it). A task whose detail shows
 * no env, or does not know it (deleted since, or not readable yet), comes without env:
 * it matches no token, and the walk proves nothing absent.
 */
export async function* withDetailEnv(
  walk: AsyncGenerator<TrainingTask, PageWalkEnd, undefined>,
  details: ListDetails<TrainingTask>,
  read: (id: string) => Promise<TrainingTask>,
): AsyncGenerator<TrainingTask, PageWalkEnd, undefined> {
  for (;;) {
    const next = await walk.next();
    if (next.done) return next.value;
    const task = next.value;
    if (task.env) {
      yield task;
      continue;
    }
    details.lacking();
    const kept = details.get(task.id) ?? (await detailOf(task.id, read));
    yield { ...task, env: kept?.env };
  }
}

/** Task `id` as `read` shows it, or undefined when the service does not know it. */
async function detailOf(
  id: string,
  read: (id: string) => Promise<TrainingTask>,
): Promise<TrainingTask | undefined> {
  try {
    return await read(id);
  } catch (err) {
    if (err instanceof ServiceNotFoundError) return undefined;
    throw err;
  }
}
