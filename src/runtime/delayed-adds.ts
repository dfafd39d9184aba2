/**
 * The keys a {@link WorkQueue} adds later: after a delay (the earliest pending delay of
 * a key wins and keeps the higher priority), and rate-limited retries (client-go's
 * default controller rate limiter: the larger of a per-key exponential backoff and a
 * global token bucket's delay).
 */

import { type QueuePriority, servedBefore } from "./fair-lanes.js";
import {
  type BackoffOptions,
  ExponentialBackoff,
  TokenBucket,
  type TokenBucketOptions,
} from "./ratelimit.js";
import type { Clock } from "./resource.js";

/** Default global retry rate limit (client-go's): 10 per second, burst 100. */
export const DEFAULT_RETRY_RATE_LIMIT: TokenBucketOptions = { qps: 10, burst: 100 };

/** The delayed adds of one queue; see the module comment. */
export class DelayedAdds {
  private readonly delayed = new Map<
    string,
    { at: number; timer: NodeJS.Timeout; priority: QueuePriority }
  >();
  private readonly backoff: ExponentialBackoff;
  private readonly bucket: TokenBucket;
  private readonly clock: Clock;

  /** `add` queues a key whose delay passed. */
  constructor(
    private readonly add: (key: string, priority: QueuePriority) => void,
    options: { backoff?: Partial<BackoffOptions>; rateLimit?: TokenBucketOptions; clock: Clock },
  ) {
    this.clock = options.clock;
    this.backoff = new ExponentialBackoff(options.backoff);
    this.bucket = new TokenBucket(options.rateLimit ?? DEFAULT_RETRY_RATE_LIMIT, this.clock);
  }

  /** Adds `key` after `delayMs` (> 0) unless an earlier add of it is pending. */
  after(key: string, delayMs: number, priority: QueuePriority): void {
    const at = this.clock.now().getTime() + delayMs;
    const pending = this.delayed.get(key);
    if (pending && pending.at <= at) {
      if (servedBefore(priority, pending.priority)) pending.priority = priority;
      return;
    }
    if (pending) clearTimeout(pending.timer);
    const entry = {
      at,
      priority: pending && servedBefore(pending.priority, priority) ? pending.priority : priority,
      timer: setTimeout(() => {
        this.delayed.delete(key);
        this.add(key, entry.priority);
      }, delayMs),
    };
    this.delayed.set(key, entry);
  }

  /** The delay of `key`'s next retry (counting a failure of it). */
  retryDelay(key: string): number {
    return Math.max(this.backoff.when(key), this.bucket.reserve());
  }

  /** Resets the backoff of `key`. */
  forget(key: string): void {
    this.backoff.forget(key);
  }

  /** Failures counted for `key` since it was last forgotten. */
  failuresOf(key: string): number {
    return this.backoff.failuresOf(key);
  }

  /** Drops every pending add (shutdown). */
  clear(): void {
    for (const { timer } of this.delayed.values()) clearTimeout(timer);
    this.delayed.clear();
  }
}
