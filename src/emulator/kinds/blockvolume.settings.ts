/**
 * The emulator settings of BlockVolume. Imports nothing: state.ts reads every kind's
 * settings through the generated index (settings-index.ts), and the kind's handlers
 * read them as `state.behaviour.<name>`; the admin API (`PATCH /_admin/config`), the
 * emulator's start options and `aidc-operator emulator --<name in kebab case>` take
 * them without an edit of their own.
 */
export const settings = {
  /**
   * How long a block volume stays `creating`, `attaching`, `detaching` or `deleting`
   * before the change shows (the spec does not say whether these operations are
   * immediate); 0 = at once.
   */
  volumeTransitionMs: {
    default: 1000,
    description: "how long a volume stays creating, attaching, detaching or deleting",
  },
} as const;
