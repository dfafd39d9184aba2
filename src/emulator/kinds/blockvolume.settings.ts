/**
 * The emulator settings of BlockVolume, read by its handlers as `state.behaviour.<name>`
 * (kind-settings.ts: how they reach the admin API, the start options and the CLI).
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
