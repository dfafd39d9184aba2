/**
 * The emulator settings of FileSystem, read by its handlers as `state.behaviour.<name>`
 * (kind-settings.ts: how they reach the admin API, the start options and the CLI).
 */
export const settings = {
  /**
   * How long a new file system or mount stays `creating`, and a deleted one `deleting`,
   * before it is `available` / `mounted`, or gone (the spec shows no states or timing).
   */
  fileStorageDelayMs: {
    default: 1000,
    description: "how long a new or deleted file system or mount is creating / deleting",
  },
} as const;
