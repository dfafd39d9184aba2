/**
 * Fair shares among flows (the accounts objects use), as API Priority and Fairness gives
 * them: a work queue's workers ({@link FairLanes}) and a Kubernetes client's requests in
 * flight ({@link FairSeats}); and the delays of a work queue's retries ({@link RetryRateLimiter}).
 */
import { DEFAULT_BACKOFF, DEFAULT_RETRY_RATE_LIMIT } from "./defaults.js";
import { type Clock, systemClock } from "./resource.js";

/**
 * A key's lane. `normal`: work to do (a new or changed object, a create, a retry).
 * `deferred`: a follow-up look of an object still settling. `low`: a routine look (a
 * poll of a settled object, a resync). A lane goes only when no lane before it has a key
 * of a flow below its limits: a new object does not wait behind a sweep of polls.
 */
export type QueuePriority = "normal" | "deferred" | "low";

export const LANES_IN_ORDER: readonly QueuePriority[] = ["normal", "deferred", "low"];

export function servedBefore(a: QueuePriority, b: QueuePriority): boolean {
  return LANES_IN_ORDER.indexOf(a) < LANES_IN_ORDER.indexOf(b);
}

/**
 * Most keys of one flow that workers hold from a lane and the lanes after it, so that
 * looks waiting on a saturated budget leave the flow workers for its new work.
 */
export interface LaneLimits {
  deferred?: number;
  low?: number;
}

/**
 * The waiting keys of a work queue by lane and flow: flows served in turn, lanes in order,
 * a flow holding `flowLimit` workers (or a lane's {@link LaneLimits}) skipped meanwhile.
 */
export class FairLanes {
  private readonly lanes: Record<QueuePriority, Map<string, string[]>> = {
    normal: new Map(),
    deferred: new Map(),
    low: new Map(),
  };
  /** The flows in turn order; the next turn starts at `turn`. */
  private readonly flows: string[] = [];
  private turn = 0;
  /** Keys held by workers per flow and lane. */
  private readonly held = new Map<string, Record<QueuePriority, number>>();
  /** The bound of each lane and the lanes after it. */
  private readonly limits: number[];

  constructor(flowLimit: number, limits: LaneLimits = {}) {
    const unbounded = Number.POSITIVE_INFINITY;
    this.limits = [flowLimit, limits.deferred ?? unbounded, limits.low ?? unbounded].map((n) =>
      Math.max(1, n),
    );
  }

  push(priority: QueuePriority, flow: string, key: string): void {
    let lane = this.lanes[priority].get(flow);
    if (!lane) {
      lane = [];
      this.lanes[priority].set(flow, lane);
      if (!this.flows.includes(flow)) this.flows.push(flow);
    }
    lane.push(key);
  }

  /** The first key `live` accepts of the next flow in turn below its limits; refused ones drop. */
  next(
    live: (key: string, priority: QueuePriority) => boolean,
  ): { key: string; priority: QueuePriority } | undefined {
    const n = this.flows.length;
    for (const priority of LANES_IN_ORDER) {
      const lanes = this.lanes[priority];
      for (let i = 0; i < n; i++) {
        const flow = this.flows[(this.turn + i) % n] as string;
        const lane = lanes.get(flow);
        if (!lane || this.atLimit(flow, priority)) continue;
        let key = lane.shift();
        while (key !== undefined && !live(key, priority)) key = lane.shift();
        if (lane.length === 0) lanes.delete(flow);
        if (key === undefined) continue;
        this.turn = (this.turn + i + 1) % n;
        return { key, priority };
      }
    }
    return undefined;
  }

  /** A worker took a key of `flow` from `priority`'s lane. */
  hold(flow: string, priority: QueuePriority): void {
    const held = this.held.get(flow) ?? { normal: 0, deferred: 0, low: 0 };
    held[priority]++;
    this.held.set(flow, held);
  }

  /** A worker is done with a key of `flow` from `priority`'s lane (then {@link tidy} it). */
  release(flow: string, priority: QueuePriority): void {
    const held = this.held.get(flow);
    if (held) held[priority] = Math.max(0, held[priority] - 1);
  }

  /** Forgets a flow with no lane and no worker (its turn goes with it). */
  tidy(flow: string): void {
    if (LANES_IN_ORDER.some((priority) => this.lanes[priority].has(flow))) return;
    const held = this.held.get(flow);
    if (held && held.normal + held.deferred + held.low > 0) return;
    this.held.delete(flow);
    const index = this.flows.indexOf(flow);
    if (index < 0) return;
    this.flows.splice(index, 1);
    if (this.turn > index) this.turn--;
    if (this.turn >= this.flows.length) this.turn = 0;
  }

  clear(): void {
    for (const priority of LANES_IN_ORDER) this.lanes[priority].clear();
  }

  /** Whether a key from `priority`'s lane would pass its lane's limit or an earlier lane's. */
  private atLimit(flow: string, priority: QueuePriority): boolean {
    const held = this.held.get(flow);
    if (!held) return false;
    let from = 0;
    for (let i = LANES_IN_ORDER.length - 1; i >= 0; i--) {
      from += held[LANES_IN_ORDER[i] as QueuePriority];
      if (i <= LANES_IN_ORDER.indexOf(priority) && from >= (this.limits[i] as number)) return true;
    }
    return false;
  }
}

/**
 * Requests in flight shared by flows: a seat set free goes to the waiting flow holding the
 * fewest, so another flow's request takes the next seat instead of queueing behind a backlog.
 */
export class FairSeats {
  private free: number;
  /** Waiting requests per flow, in the order they began to wait. */
  private readonly queues = new Map<string, Array<() => void>>();
  private readonly held = new Map<string, number>();

  constructor(seats: number) {
    this.free = Math.max(1, seats);
  }

  /** Undefined when `flow` has a seat at once, else a promise of one; then {@link release} it. */
  acquire(flow: string): Promise<void> | undefined {
    if (this.free > 0 && this.queues.size === 0) {
      this.free--;
      this.take(flow);
      return undefined;
    }
    return new Promise<void>((resolve) => {
      const queue = this.queues.get(flow);
      if (queue) queue.push(resolve);
      else this.queues.set(flow, [resolve]);
    });
  }

  /** Sets a seat of `flow` free for the waiting flow holding the fewest, if any. */
  release(flow: string): void {
    const held = (this.held.get(flow) ?? 1) - 1;
    if (held > 0) this.held.set(flow, held);
    else this.held.delete(flow);
    let next: string | undefined;
    for (const waiting of this.queues.keys()) {
      if (next === undefined || (this.held.get(waiting) ?? 0) < (this.held.get(next) ?? 0)) {
        next = waiting;
      }
    }
    if (next === undefined) {
      this.free++;
      return;
    }
    const queue = this.queues.get(next) as Array<() => void>;
    const resolve = queue.shift() as () => void;
    // Served, a flow waits behind the others again.
    this.queues.delete(next);
    if (queue.length > 0) this.queues.set(next, queue);
    this.take(next);
    resolve();
  }

  get waiting(): number {
    return [...this.queues.values()].reduce((n, queue) => n + queue.length, 0);
  }

  private take(flow: string): void {
    this.held.set(flow, (this.held.get(flow) ?? 0) + 1);
  }
}

/** Per-key exponential backoff: `baseMs * 2^failures`, capped at `maxMs`. */
export interface BackoffOptions {
  baseMs: number;
  maxMs: number;
}

/** The delay of each key's next retry (client-go's ItemExponentialFailureRateLimiter). */
export class ExponentialBackoff {
  private readonly failures = new Map<string, number>();
  private readonly options: BackoffOptions;

  constructor(options: Partial<BackoffOptions> = {}) {
    this.options = { ...DEFAULT_BACKOFF, ...options };
  }

  /** Records one more failure of `key` and returns the delay before its retry. */
  when(key: string): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    // 2^n overflows to Infinity for large n; Math.min still yields maxMs.
    return Math.min(this.options.baseMs * 2 ** n, this.options.maxMs);
  }

  /** Failures recorded for `key` since it was last forgotten. */
  failuresOf(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  forget(key: string): void {
    this.failures.delete(key);
  }
}

export interface TokenBucketOptions {
  qps: number;
  burst: number;
}

/**
 * `burst` tokens refilled at `qps` per second (`qps <= 0`: unlimited), handed out as
 * reservations (golang.org/x/time/rate): a token taken into debt is used after a delay.
 */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly options: TokenBucketOptions,
    private readonly clock: Clock = systemClock,
  ) {
    this.tokens = options.burst;
    this.last = clock.now().getTime();
  }

  /** Takes one token; returns the delay in ms until it may be used (0 when available). */
  reserve(): number {
    if (this.options.qps <= 0) return 0;
    this.tokens = this.refill() - 1;
    if (this.tokens >= 0) return 0;
    return Math.ceil((-this.tokens / this.options.qps) * 1000);
  }

  /** Adds the tokens earned since the last refill; returns the tokens (a fraction, or a debt). */
  refill(): number {
    const now = this.clock.now().getTime();
    const elapsed = Math.max(0, now - this.last) / 1000;
    this.last = now;
    this.tokens = Math.min(this.options.burst, this.tokens + elapsed * this.options.qps);
    return this.tokens;
  }

  /** True when the bucket has refilled to its burst. */
  isFull(): boolean {
    if (this.options.qps <= 0) return true;
    const elapsed = Math.max(0, this.clock.now().getTime() - this.last) / 1000;
    return this.tokens + elapsed * this.options.qps >= this.options.burst;
  }
}

/**
 * The delays of a work queue's retries (client-go's default controller rate limiter):
 * the larger of a per-key exponential backoff and a global token bucket's delay.
 */
export class RetryRateLimiter {
  private readonly backoff: ExponentialBackoff;
  private readonly bucket: TokenBucket;

  constructor(
    options: { backoff?: Partial<BackoffOptions>; rateLimit?: TokenBucketOptions },
    clock: Clock,
  ) {
    this.backoff = new ExponentialBackoff(options.backoff);
    this.bucket = new TokenBucket(options.rateLimit ?? DEFAULT_RETRY_RATE_LIMIT, clock);
  }

  when(key: string): number {
    return Math.max(this.backoff.when(key), this.bucket.reserve());
  }

  failuresOf(key: string): number {
    return this.backoff.failuresOf(key);
  }

  forget(key: string): void {
    this.backoff.forget(key);
  }
}
