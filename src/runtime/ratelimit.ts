import { type Clock, systemClock } from "./clock.js";
import { DEFAULT_BACKOFF } from "./defaults.js";

/**
 * Per-key exponential backoff: `baseMs * 2^failures`, capped at `maxMs` (defaults:
 * `DEFAULT_BACKOFF`, defaults.ts).
 */
export interface BackoffOptions {
  /** Delay after the first failure. */
  baseMs: number;
  /** Upper bound of the delay. */
  maxMs: number;
}

/**
 * Counts failures per key and answers how long the next retry of that key should wait
 * (client-go's ItemExponentialFailureRateLimiter). `forget` resets a key.
 */
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

  /** Clears the failure count of `key` (after a success). */
  forget(key: string): void {
    this.failures.delete(key);
  }
}

/** A token bucket: `burst` tokens, refilled at `qps` per second. */
export interface TokenBucketOptions {
  qps: number;
  burst: number;
}

/**
 * A token bucket that hands out reservations (golang.org/x/time/rate semantics):
 * `reserve()` always takes a token, possibly going into debt, and returns how long the
 * caller must wait before using it. `qps <= 0` means unlimited.
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
    const now = this.clock.now().getTime();
    const elapsed = Math.max(0, now - this.last) / 1000;
    this.last = now;
    this.tokens = Math.min(this.options.burst, this.tokens + elapsed * this.options.qps);
    this.tokens -= 1;
    if (this.tokens >= 0) return 0;
    return Math.ceil((-this.tokens / this.options.qps) * 1000);
  }

  /** Resolves when a token may be used (for rate-limiting outgoing requests). */
  async take(): Promise<void> {
    const delay = this.reserve();
    if (delay > 0) await new Promise((r) => setTimeout(r, delay));
  }
}

/**
 * A token bucket shared by flows, as API Priority and Fairness shares a server: while
 * requests wait, each token goes to the next waiting flow in turn, so that a flow with a
 * backlog delays another's request by about one token per waiting flow, not by its whole
 * backlog. Without waiters it behaves as {@link TokenBucket}. `qps <= 0`: unlimited.
 */
export class FairTokenBucket {
  private tokens: number;
  private last: number;
  private readonly queues = new Map<string, Array<() => void>>();
  /** Flows with waiting requests, in the order of their turns. */
  private readonly order: string[] = [];
  private turn = 0;
  private waiters = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: TokenBucketOptions,
    private readonly clock: Clock = systemClock,
  ) {
    this.tokens = options.burst;
    this.last = clock.now().getTime();
  }

  /** Resolves when a request of `flow` may be sent; returns the ms it waited. */
  async take(flow = ""): Promise<number> {
    if (this.options.qps <= 0) return 0;
    this.refill();
    if (this.waiters === 0 && this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    const started = this.clock.now().getTime();
    await new Promise<void>((resolve) => {
      let queue = this.queues.get(flow);
      if (!queue) {
        queue = [];
        this.queues.set(flow, queue);
        this.order.push(flow);
      }
      queue.push(resolve);
      this.waiters++;
      this.schedule();
    });
    return this.clock.now().getTime() - started;
  }

  /** Requests waiting for a token. */
  get waiting(): number {
    return this.waiters;
  }

  private refill(): void {
    const now = this.clock.now().getTime();
    const elapsed = Math.max(0, now - this.last) / 1000;
    this.last = now;
    this.tokens = Math.min(this.options.burst, this.tokens + elapsed * this.options.qps);
  }

  /** Wakes up when the next token is due and hands tokens to the flows in turn. */
  private schedule(): void {
    if (this.timer || this.waiters === 0) return;
    const due = Math.max(0, Math.ceil(((1 - this.tokens) / this.options.qps) * 1000));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.refill();
      while (this.tokens >= 1 && this.waiters > 0) {
        this.tokens -= 1;
        this.nextWaiter()();
      }
      this.schedule();
    }, due);
  }

  /** The first waiter of the next flow in turn (a flow leaves the turns once served out). */
  private nextWaiter(): () => void {
    this.turn %= this.order.length;
    const flow = this.order[this.turn] as string;
    const queue = this.queues.get(flow) as Array<() => void>;
    const resolve = queue.shift() as () => void;
    this.waiters--;
    if (queue.length === 0) {
      this.queues.delete(flow);
      this.order.splice(this.turn, 1);
    } else {
      this.turn++;
    }
    return resolve;
  }
}
