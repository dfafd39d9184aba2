/**
 * The time source of the runtime and of reconcilers. Pass one in instead of calling
 * `Date.now()` so tests control time (vitest fake timers drive {@link systemClock}, or
 * pass a hand-made Clock).
 */
export interface Clock {
  /** The current time. */
  now(): Date;
}

/** The real clock (follows `Date`, so vitest fake timers move it too). */
export const systemClock: Clock = { now: () => new Date() };

/** RFC 3339 with seconds precision, as metav1.Time serialises (`2024-05-01T10:00:00Z`). */
export function rfc3339(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}
