import { type Clock, systemClock } from "./clock.js";
import {
  type BackoffOptions,
  ExponentialBackoff,
  TokenBucket,
  type TokenBucketOptions,
} from "./ratelimit.js";

/** Receives the queue's measurements (see metrics.ts for the Prometheus side). */
export interface WorkQueueObserver {
  /** A key was added (de-duplicated adds are not counted). */
  added(): void;
  /** The number of keys waiting to be processed. */
  depth(n: number): void;
  /** Seconds a key waited between being added and being handed to a worker. */
  queueLatency(seconds: number): void;
  /** Seconds a worker held a key (from get to done). */
  workDuration(seconds: number): void;
  /** A rate-limited retry was scheduled. */
  retried(): void;
}

/** Options of a {@link WorkQueue}. */
export interface WorkQueueOptions {
  /** Per-key exponential backoff for {@link WorkQueue.addRateLimited}. */
  backoff?: Partial<BackoffOptions>;
  /**
   * Global token bucket applied to rate-limited retries across all keys (client-go's
   * default controller rate limiter: the larger of the per-key and the bucket delay).
   * Default 10 qps, burst 100.
   */
  rateLimit?: TokenBucketOptions;
  clock?: Clock;
  observer?: WorkQueueObserver;
}

/** Default global retry rate limit (client-go's): 10 per second, burst 100. */
export const DEFAULT_RETRY_RATE_LIMIT: TokenBucketOptions = { qps: 10, burst: 100 };

/**
 * A keyed work queue with client-go's semantics:
 *
 * - **De-duplication**: a key added while already waiting is queued once.
 * - **Per-key serialisation**: a key is handed to at most one worker at a time; a key
 *   added while it is being processed is queued again when the worker calls `done`.
 * - **Delays**: `addAfter` (earliest pending delay per key wins) and `addRateLimited`
 *   (per-key exponential backoff combined with a global token bucket); `forget` resets
 *   a key's backoff after a success.
 * - **Shutdown**: `shutDown` stops handing out work at once (waiting and future `get`
 *   calls resolve `undefined`, queued and delayed keys are dropped: level-triggered
 *   controllers rebuild them from the cache) and `drain` waits for in-flight keys.
 *
 * Workers loop: `for (let k; (k = await q.get()) !== undefined; ) { try {...} finally { q.done(k) } }`.
 */
export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly addedAt = new Map<string, number>();
  private readonly startedAt = new Map<string, number>();
  private readonly delayed = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly getters: Array<(key: string | undefined) => void> = [];
  private readonly drainers: Array<() => void> = [];
  private readonly backoff: ExponentialBackoff;
  private readonly bucket: TokenBucket;
  private readonly clock: Clock;
  private readonly observer: WorkQueueObserver | undefined;
  private stopping = false;

  constructor(options: WorkQueueOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.backoff = new ExponentialBackoff(options.backoff);
    this.bucket = new TokenBucket(options.rateLimit ?? DEFAULT_RETRY_RATE_LIMIT, this.clock);
    this.observer = options.observer;
  }

  /** Queues `key` now unless it is already waiting; ignored after shutdown. */
  add(key: string): void {
    if (this.stopping || this.dirty.has(key)) return;
    this.observer?.added();
    this.dirty.add(key);
    this.addedAt.set(key, this.now());
    if (this.processing.has(key)) return;
    this.enqueue(key);
  }

  /** Queues `key` after `delayMs`; an earlier pending delay of the same key wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.stopping) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const at = this.now() + delayMs;
    const pending = this.delayed.get(key);
    if (pending && pending.at <= at) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, delayMs);
    this.delayed.set(key, { at, timer });
  }

  /**
   * Queues `key` after its backoff: the larger of the per-key exponential delay and the
   * global bucket's delay. Returns the delay chosen.
   */
  addRateLimited(key: string): number {
    const delay = Math.max(this.backoff.when(key), this.bucket.reserve());
    this.observer?.retried();
    this.addAfter(key, delay);
    return delay;
  }

  /** Resets the backoff of `key` (call after a successful reconcile). */
  forget(key: string): void {
    this.backoff.forget(key);
  }

  /** Failures counted for `key` since it was last forgotten. */
  numRequeues(key: string): number {
    return this.backoff.failuresOf(key);
  }

  /**
   * The next key to process; waits while the queue is empty. Resolves `undefined` once
   * the queue is shut down. The caller must call {@link done} with the key.
   */
  get(): Promise<string | undefined> {
    if (this.stopping) return Promise.resolve(undefined);
    const key = this.queue.shift();
    if (key !== undefined) {
      this.startProcessing(key);
      return Promise.resolve(key);
    }
    return new Promise((resolve) => this.getters.push(resolve));
  }

  /** True while a worker holds `key` (between `get` and `done`). */
  isProcessing(key: string): boolean {
    return this.processing.has(key);
  }

  /**
   * Forgets that `key` was added while a worker held it, so that `done` does not queue
   * it again; for adds the caller knows asked for nothing. No effect otherwise.
   */
  cancelReadd(key: string): void {
    if (!this.processing.has(key) || !this.dirty.delete(key)) return;
    this.addedAt.delete(key);
  }

  /** Marks `key` as processed; if it was added meanwhile, it is queued again. */
  done(key: string): void {
    if (!this.processing.delete(key)) return;
    const started = this.startedAt.get(key);
    this.startedAt.delete(key);
    if (started !== undefined) this.observer?.workDuration((this.now() - started) / 1000);
    if (this.dirty.has(key) && !this.stopping) this.enqueue(key);
    if (this.processing.size === 0) for (const d of this.drainers.splice(0)) d();
  }

  /** Keys waiting to be processed (not counting delayed or in-flight keys). */
  len(): number {
    return this.queue.length;
  }

  /** Keys currently held by workers. */
  inFlight(): number {
    return this.processing.size;
  }

  /** True once {@link shutDown} was called. */
  get isShuttingDown(): boolean {
    return this.stopping;
  }

  /** Stops handing out work: pending `get` calls resolve `undefined`, delays are dropped. */
  shutDown(): void {
    if (this.stopping) return;
    this.stopping = true;
    for (const { timer } of this.delayed.values()) clearTimeout(timer);
    this.delayed.clear();
    this.queue.length = 0;
    this.dirty.clear();
    this.addedAt.clear();
    this.observer?.depth(0);
    for (const g of this.getters.splice(0)) g(undefined);
  }

  /**
   * Waits until no key is in flight, at most `timeoutMs`. Resolves true when drained,
   * false when the bound passed first.
   */
  drain(timeoutMs: number): Promise<boolean> {
    if (this.processing.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.drainers.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  private enqueue(key: string): void {
    const getter = this.getters.shift();
    if (getter) {
      this.startProcessing(key);
      getter(key);
      return;
    }
    this.queue.push(key);
    this.observer?.depth(this.queue.length);
  }

  private startProcessing(key: string): void {
    this.processing.add(key);
    this.dirty.delete(key);
    const added = this.addedAt.get(key);
    this.addedAt.delete(key);
    if (added !== undefined) this.observer?.queueLatency((this.now() - added) / 1000);
    this.startedAt.set(key, this.now());
    this.observer?.depth(this.queue.length);
  }

  private now(): number {
    return this.clock.now().getTime();
  }
}
