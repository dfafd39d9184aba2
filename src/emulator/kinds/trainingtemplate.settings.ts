/**
 * The emulator settings of TrainingTemplate, read by its handlers as
 * `state.behaviour.<name>` (kind-settings.ts: how they reach the admin API, the start
 * options and the CLI).
 */
export const settings = {
  /**
   * The envelope status (400 or 409) of a template create whose name a template has
   * (the spec does not say whether names are unique); 0 = names may repeat.
   */
  templateNameTakenStatus: {
    default: 0,
    description: "status (400 or 409) to a template create whose name exists (0: names may repeat)",
  },
} as const;
