/**
 * The deleted objects whose finalizer this process removed, remembered for a while by
 * uid. After the removal the cache may still show such an object, finalizer and all,
 * until the watch delivers its deletion (late on a loaded API server or process); a
 * reconcile of that stale copy (a requeue that was due, an event queued before the
 * removal) must not act on it again: no second delete sent to the service, no second
 * Event, no write. A finalizer cannot be added to an object being deleted, so a copy of
 * a remembered uid that shows the finalizer is always stale.
 */

/** How long a release is remembered: far longer than any watch lags. */
export const RELEASED_MEMORY_MS = 10 * 60_000;

/** The most releases remembered at once (the oldest forgotten first). */
export const RELEASED_MAX = 10_000;

/** uid → when this process removed the object's finalizer (ms), oldest first. */
const releasedAt = new Map<string, number>();

/** Remembers that this process removed the finalizer of the deleted object `uid`. */
export function noteReleased(uid: string | undefined, nowMs: number): void {
  if (!uid) return;
  releasedAt.delete(uid);
  releasedAt.set(uid, nowMs);
  for (const [oldest, at] of releasedAt) {
    if (releasedAt.size <= RELEASED_MAX && nowMs - at < RELEASED_MEMORY_MS) break;
    releasedAt.delete(oldest);
  }
}

/** True when this process removed the finalizer of `uid` (within {@link RELEASED_MEMORY_MS}). */
export function wasReleased(uid: string | undefined, nowMs: number): boolean {
  if (!uid) return false;
  const at = releasedAt.get(uid);
  return at !== undefined && nowMs - at < RELEASED_MEMORY_MS;
}
