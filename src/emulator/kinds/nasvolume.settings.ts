/**
 * The emulator settings of NasVolume, read by its handlers as `state.behaviour.<name>`
 * (kind-settings.ts: how they reach the admin API, the start options and the CLI).
 */
export const settings = {
  /**
   * How long an accepted scale takes to show in the NAS quota (the spec: "status 200
   * means the request was accepted"); a second scale meanwhile is refused (409).
   * 0 = at once.
   */
  nasScaleDelayMs: {
    default: 0,
    description: "how long an accepted NAS scale takes to show in the quota",
  },
} as const;
