/**
 * The emulator settings of FileSystem. Imports nothing: state.ts reads every kind's
 * settings through the generated index (settings-index.ts), and the kind's handlers
 * read them as `state.behaviour.<name>`; the admin API (`PATCH /_admin/config`), the
 * emulator's start options and `aidc-operator emulator --<name in kebab case>` take
 * them without an edit of their own.
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
