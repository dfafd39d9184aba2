import { DEFAULT_BACKOFF, DEFAULT_RETRY_RATE_LIMIT } from "./defaults.js";
import { type Clock, systemClock } from "./resource.js";

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

  /** True when the bucket has refilled to its burst (it holds no debt and no reservation). */
  isFull(): boolean {
    if (this.options.qps <= 0) return true;
    const elapsed = Math.max(0, this.clock.now().getTime() - this.last) / 1000;
    return this.tokens + elapsed * this.options.qps >= this.options.burst;
  }

  /** Resolves when a token may be used (for rate-limiting outgoing requests). */
  async take(): Promise<void> {
    const delay = this.reserve();
    if (delay > 0) await new Promise((r) => setTimeout(r, delay));
  }
}

/**
 * The delays of a workqueue's rate-limited retries (client-go's default controller rate
 * limiter): the larger of a per-key exponential backoff and a global token bucket's
 * delay (default 10 qps, burst 100).
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

  /** Records one more failure of `key` and returns the delay before its retry. */
  when(key: string): number {
    return Math.max(this.backoff.when(key), this.bucket.reserve());
  }

  /** Failures recorded for `key` since it was last forgotten. */
  failuresOf(key: string): number {
    return this.backoff.failuresOf(key);
  }

  /** Resets the backoff of `key` (after a success). */
  forget(key: string): void {
    this.backoff.forget(key);
  }
}

/**
 * The Kubernetes client's budget (kube.ts): `qps` and `burst` for each flow (an account,
 * charged through `KubeClient.forReconcile`), under an optional ceiling of all flows.
 */
export interface FlowRateLimitOptions extends TokenBucketOptions {
  /** The ceiling of all flows together; absent, none. */
  total?: TokenBucketOptions;
}

/** Flow buckets kept before the full (idle) ones are dropped. */
const KEPT_FLOW_BUCKETS = 64;

/**
 * A token bucket per flow under a shared ceiling, as API Priority and Fairness gives each
 * flow its share: a flow with a backlog waits at its own bucket and takes its turn of the
 * ceiling, so another flow's request waits about as long as it would alone, and spends no
 * tokens of another flow. `qps <= 0`: no limit per flow.
 */
export class FairTokenBucket {
  private readonly flows = new Map<string, TokenBucket>();
  private readonly ceiling: TurnBucket | undefined;

  constructor(
    private readonly options: FlowRateLimitOptions,
    private readonly clock: Clock = systemClock,
  ) {
    this.ceiling = options.total ? new TurnBucket(options.total, clock) : undefined;
  }

  /** Resolves when a request of `flow` may be sent; returns the ms it waited. */
  async take(flow = ""): Promise<number> {
    const started = this.clock.now().getTime();
    const delay = this.bucketOf(flow).reserve();
    if (delay > 0) await new Promise((r) => setTimeout(r, delay));
    if (this.ceiling) await this.ceiling.take(flow);
    return this.clock.now().getTime() - started;
  }

  /** Requests waiting for a token of the ceiling. */
  get waiting(): number {
    return this.ceiling?.waiting ?? 0;
  }

  private bucketOf(flow: string): TokenBucket {
    let bucket = this.flows.get(flow);
    if (!bucket) {
      // Flows come and go with connections: a full bucket is the same as a new one.
      if (this.flows.size >= KEPT_FLOW_BUCKETS) {
        for (const [f, b] of this.flows) if (b.isFull()) this.flows.delete(f);
      }
      bucket = new TokenBucket(this.options, this.clock);
      this.flows.set(flow, bucket);
    }
    return bucket;
  }
}

/**
 * A token bucket shared by flows: while requests wait, each token goes to the next
 * waiting flow in turn, so that a backlog delays another flow's request by about one
 * token per waiting flow. Without waiters it is a {@link TokenBucket}. `qps <= 0`: unlimited.
 */
class TurnBucket {
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
    private readonly clock: Clock,
  ) {
    this.tokens = options.burst;
    this.last = clock.now().getTime();
  }

  /** Resolves when a request of `flow` may be sent. */
  async take(flow: string): Promise<void> {
    if (this.options.qps <= 0) return;
    this.refill();
    if (this.waiters === 0 && this.tokens >= 1) {
      this.tokens -= 1;
      return;
    }
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
