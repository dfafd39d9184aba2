/**
 * A client-side token bucket: at most `burst` requests at once, refilled at
 * `ratePerSecond`. Callers are served in arrival order within their priority; a
 * `low` caller (a routine poll) gets a token only when no `normal` caller waits.
 */

/** Rate of the bucket. */
export interface RateLimit {
  /** Tokens added per second (sustained requests per second); > 0. */
  ratePerSecond: number;
  /** Bucket size (requests allowed at once after a quiet period); >= 1. */
  burst: number;
}

/**
 * Priority of a call at the rate limit. `low`: routine polls of settled objects, which
 * may wait while calls with work to do (creates, changes, first looks) go first.
 */
export type CallPriority = "normal" | "low";

/** Waits; injectable so tests can control time. */
export type Sleep = (ms: number) => Promise<void>;

/** A `Sleep` on real timers. */
export const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A token bucket shared by every request of one client. */
export class TokenBucket {
  private tokens: number;
  private last: number;
  private readonly waiting: Record<CallPriority, Array<() => void>> = { normal: [], low: [] };
  private serving = false;
  /** The end of the slots handed to bounced callers ({@link reserveLaterSlotMs}). */
  private laterSlots = 0;

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
  take(priority: CallPriority = "normal"): Promise<void> {
    return new Promise((resolve) => {
      this.waiting[priority].push(resolve);
      if (!this.serving) void this.serve();
    });
  }

  /** Callers waiting for a token, by priority (for tests and metrics). */
  waitingCallers(): Record<CallPriority, number> {
    return { normal: this.waiting.normal.length, low: this.waiting.low.length };
  }

  /**
   * About how long a caller of `priority` arriving now would wait for its token: the
   * callers ahead of it (every normal one; for a low one, the low ones too) and the
   * missing tokens at the refill rate. 0 when a token is there for it.
   */
  waitEstimateMs(priority: CallPriority = "normal"): number {
    this.refill();
    const ahead = this.waiting.normal.length + (priority === "low" ? this.waiting.low.length : 0);
    const missing = ahead + 1 - this.tokens;
    return missing <= 0 ? 0 : (missing / this.limit.ratePerSecond) * 1000;
  }

  /**
   * For a caller that will not wait now (a bounced call): about when to come back, as
   * a slot of its own after the callers waiting and the callers bounced before it, one
   * per refill, so that bounced callers return spread at the bucket's rate instead of
   * all at once. In ms from now.
   */
  reserveLaterSlotMs(priority: CallPriority = "normal"): number {
    const now = this.now();
    const start = Math.max(this.laterSlots, now + this.waitEstimateMs(priority));
    this.laterSlots = start + 1000 / this.limit.ratePerSecond;
    return Math.ceil(start - now);
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

  /**
   * Hands out tokens while callers wait, normal ones first; the choice is made when a
   * token is there, so a normal caller that arrives during a wait goes next.
   */
  private async serve(): Promise<void> {
    this.serving = true;
    try {
      for (;;) {
        const lane = this.waiting.normal.length > 0 ? this.waiting.normal : this.waiting.low;
        if (lane.length === 0) return;
        this.refill();
        if (this.tokens >= 1) {
          this.tokens -= 1;
          lane.shift()?.();
          continue;
        }
        await this.sleep(Math.ceil(((1 - this.tokens) / this.limit.ratePerSecond) * 1000));
      }
    } finally {
      this.serving = false;
    }
  }
}
