/**
 * The emulator settings of TrainingJob's tasks, read by the handlers as
 * `state.behaviour.<name>` (kind-settings.ts: how they reach the admin API, the start
 * options and the CLI).
 */
export const settings = {
  /**
   * How long a task whose order succeeded stays `PENDING`, without pods, before it is
   * `RUNNING` with its pods (the spec does not say when a task starts or its pods
   * appear); 0 = running, with pods, as soon as its subscription resolves.
   */
  taskStartDelayMs: {
    default: 0,
    description: "how long a task stays PENDING without pods after its order succeeded",
  },
  /**
   * How long a deleted task stays, with status `DELETING`, in its detail and the list, and
   * a deleted template in the template list, before it is gone (the spec does not say
   * whether a delete is immediate; a repeated delete meanwhile answers
   * `repeatDeleteStatus`); 0 = gone at once.
   */
  taskReleaseDelayMs: {
    default: 0,
    description: "how long a deleted task (DELETING) or template stays shown",
  },
} as const;
