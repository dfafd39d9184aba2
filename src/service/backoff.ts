/**
 * Retry policy of the client: exponential backoff with full jitter ("Exponential
 * Backoff And Jitter", AWS Architecture Blog), applied to idempotent calls only.
 */

/** How often and how patiently a failed idempotent call is tried again. */
export interface RetryPolicy {
  /** Attempts in total, the first included; 1 disables retries. */
  maxAttempts: number;
  /** Ceiling of the first backoff, doubled per attempt. */
  baseDelayMs: number;
  /** Upper bound of any backoff. */
  maxDelayMs: number;
}

/**
 * The wait before attempt `attempt + 1` after `attempt` failed (attempt counts from
 * 1): a uniform random value in [0, min(maxDelayMs, baseDelayMs * 2^(attempt-1))],
 * raised to `minimumMs` (a server's Retry-After) but never above `maxDelayMs`.
 */
export function backoffDelayMs(
  policy: RetryPolicy,
  attempt: number,
  random: () => number = Math.random,
  minimumMs = 0,
): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  const jittered = Math.floor(random() * ceiling);
  return Math.min(policy.maxDelayMs, Math.max(jittered, minimumMs));
}
