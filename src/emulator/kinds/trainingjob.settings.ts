/**
 * The emulator settings of TrainingJob's tasks. Imports nothing: state.ts reads every
 * kind's settings through the generated index (settings-index.ts) as
 * `state.behaviour.<name>`; the admin API (`PATCH /_admin/config`), the emulator's
 * start options and `aidc-operator emulator --<name in kebab case>` take them without
 * an edit of their own.
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
} as const;
