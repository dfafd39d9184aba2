/**
 * The client-side rate limit of one account: a token bucket (`burst` at once, refilled
 * at `ratePerSecond`) serving callers by priority, then in arrival order. `low` callers
 * (routine observation) also draw on a second bucket at `routineShare` of the rate, so
 * at idle they use at most that share and stretch their intervals when the fleet needs more.
 */
import type { CallContext } from "./call-context.js";
import { ServiceThrottledError } from "./errors.js";

/** Sustained requests per second (> 0) and requests at once after a quiet period (>= 1). */
export interface RateLimit {
  ratePerSecond: number;
  burst: number;
}

/**
 * Served in this order: `normal` (creates, changes, first looks), `deferred` (follow-up
 * reads of objects still settling), `low` (routine observation, within the routine budget).
 */
export type CallPriority = "normal" | "deferred" | "low";

/** The priority at the rate limit of a call made under `context`. */
export function priorityOf(context: CallContext): CallPriority {
  if (context.routine) return "low";
  return context.followUp ? "deferred" : "normal";
}

const SERVED_FIRST: readonly CallPriority[] = ["normal", "deferred", "low"];

/** Waits; injectable so tests can control time. */
export type Sleep = (ms: number) => Promise<void>;

export const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export class TokenBucket {
  private tokens: number;
  private last: number;
  private readonly waiting: Record<CallPriority, Array<(stretchMs: number) => void>> = {
    normal: [],
    deferred: [],
    low: [],
  };
  /** The routine budget's tokens (low callers take one here too); Infinity: no budget. */
  private routine: number;
  private readonly routineRate: number;
  private readonly routineBurst: number;
  /** How long the low caller at the head waited for the routine budget alone. */
  private stretch = 0;
  private serving = false;
  /** The end of the slots handed to bounced callers. */
  private laterSlots = 0;
  /** Ends the wait of a low caller for the routine budget (a higher caller arrived). */
  private wake: (() => void) | undefined;

  constructor(
    private readonly limit: RateLimit,
    private readonly now: () => number = Date.now,
    private readonly sleep: Sleep = realSleep,
    /** Share (0..1] of the rate routine (low) calls may use; 1 or undefined: no budget. */
    routineShare?: number,
  ) {
    if (!(limit.ratePerSecond > 0) || !(limit.burst >= 1)) {
      throw new Error(
        `invalid rate limit ${JSON.stringify(limit)}: ratePerSecond must be > 0 and burst >= 1`,
      );
    }
    this.tokens = limit.burst;
    this.last = now();
    const share =
      routineShare !== undefined && routineShare > 0 && routineShare < 1 ? routineShare : 1;
    this.routineRate = limit.ratePerSecond * share;
    this.routineBurst = share === 1 ? Number.POSITIVE_INFINITY : Math.max(1, limit.burst * share);
    this.routine = this.routineBurst;
  }

  /**
   * Takes one token when the caller may send; resolves with the ms a low caller waited for
   * the routine budget alone (0 for the others).
   */
  take(priority: CallPriority = "normal"): Promise<number> {
    return new Promise((resolve) => {
      this.waiting[priority].push(resolve);
      if (!this.serving) void this.serve();
      else if (priority !== "low") this.wake?.();
    });
  }

  /** Callers waiting for a token, by priority (for tests and metrics). */
  waitingCallers(): Record<CallPriority, number> {
    return {
      normal: this.waiting.normal.length,
      deferred: this.waiting.deferred.length,
      low: this.waiting.low.length,
    };
  }

  /** About how long a caller of `priority` arriving now would wait for its token. */
  waitEstimateMs(priority: CallPriority = "normal"): number {
    this.refill();
    let ahead = 0;
    for (const p of SERVED_FIRST.slice(0, SERVED_FIRST.indexOf(priority) + 1)) {
      ahead += this.waiting[p].length;
    }
    const missing = ahead + 1 - this.tokens;
    const wait = missing <= 0 ? 0 : (missing / this.limit.ratePerSecond) * 1000;
    if (priority !== "low" || this.routineBurst === Number.POSITIVE_INFINITY) return wait;
    const routineMissing = this.waiting.low.length + 1 - this.routine;
    return Math.max(wait, routineMissing <= 0 ? 0 : (routineMissing / this.routineRate) * 1000);
  }

  /** Throws `ServiceThrottledError` (not sent) when the wait would pass `maxWaitMs`. */
  refuseLongWait(endpoint: string, priority: CallPriority, maxWaitMs: number | undefined): void {
    if (maxWaitMs === undefined || this.waitEstimateMs(priority) <= maxWaitMs) return;
    throw new ServiceThrottledError(
      // Only the configured bound in the message: a repeat writes the same condition.
      `the client-side rate limit of this connection is saturated (more than ${maxWaitMs} ms of calls ahead): ${endpoint} was not sent and is retried`,
      { endpoint, code: undefined },
      this.reserveLaterSlotMs(priority),
    );
  }

  /**
   * In ms from now, when a bounced caller should come back: a slot of its own after those
   * waiting and bounced before it, so bounced callers return spread at the bucket's rate.
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
    this.routine = Math.min(this.routineBurst, this.routine + elapsed * this.routineRate);
  }

  /**
   * Hands out tokens by priority, choosing when a token is there: a higher caller arriving
   * during a wait goes next (at once when only the routine budget held the wait).
   */
  private async serve(): Promise<void> {
    this.serving = true;
    try {
      for (;;) {
        const first = SERVED_FIRST.find((p) => this.waiting[p].length > 0);
        if (first === undefined) return;
        const low = first === "low";
        const lane = this.waiting[first];
        this.refill();
        if (this.tokens >= 1 && (!low || this.routine >= 1)) {
          this.tokens -= 1;
          if (low) this.routine -= 1;
          const stretch = low ? this.stretch : 0;
          if (low) this.stretch = 0;
          lane.shift()?.(stretch);
          continue;
        }
        const forToken = ((1 - this.tokens) / this.limit.ratePerSecond) * 1000;
        const forRoutine = low ? ((1 - this.routine) / this.routineRate) * 1000 : 0;
        const ms = Math.ceil(Math.max(forToken, forRoutine));
        if (!low) {
          await this.sleep(ms);
          continue;
        }
        // A low caller waits for the routine budget only until a caller of a higher
        // priority arrives: that one takes the next token of the full rate.
        const start = this.now();
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          void this.sleep(ms).then(resolve);
        });
        this.wake = undefined;
        // The time only the routine budget held the head low caller back.
        const waited = Math.min(ms, Math.max(0, this.now() - start));
        this.stretch += Math.max(0, waited - Math.max(0, Math.ceil(forToken)));
      }
    } finally {
      this.serving = false;
    }
  }
}
