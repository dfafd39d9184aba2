/**
 * A client-side token bucket: at most `burst` requests at once, refilled at
 * `ratePerSecond`. Callers are served in arrival order.
 */

/** Rate of the bucket. */
export interface RateLimit {
  /** Tokens added per second (sustained requests per second); > 0. */
  ratePerSecond: number;
  /** Bucket size (requests allowed at once after a quiet period); >= 1. */
  burst: number;
}

/** Waits; injectable so tests can control time. */
export type Sleep = (ms: number) => Promise<void>;

/** A `Sleep` on real timers. */
export const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A token bucket shared by every request of one client. */
export class TokenBucket {
  private tokens: number;
  private last: number;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly limit: RateLimit,
    private readonly now: () => number = Date.now,
    private readonly sleep: Sleep = realSleep,
  ) {
    if (!(limit.ratePerSecond > 0) || !(limit.burst >= 1)) {
      throw new Error(
        `invalid rate limit ${JSON.stringify(limit)}: ratePerSecond must be > 0 and burst >= 1`,
      );
    }
    this.tokens = limit.burst;
    this.last = now();
  }

  /** Resolves when the caller may send one request; takes one token. */
  take(): Promise<void> {
    const turn = this.queue.then(() => this.waitForToken());
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  /** Tokens available right now (for tests and metrics). */
  available(): number {
    this.refill();
    return this.tokens;
  }

  private refill(): void {
    const t = this.now();
    const elapsed = Math.max(0, t - this.last) / 1000;
    this.last = t;
    this.tokens = Math.min(this.limit.burst, this.tokens + elapsed * this.limit.ratePerSecond);
  }

  private async waitForToken(): Promise<void> {
    this.refill();
    while (this.tokens < 1) {
      await this.sleep(Math.ceil(((1 - this.tokens) / this.limit.ratePerSecond) * 1000));
      this.refill();
    }
    this.tokens -= 1;
  }
}
