import {
  type BackoffOptions,
  FairLanes,
  type LaneLimits,
  type QueuePriority,
  RetryRateLimiter,
  servedBefore,
  type TokenBucketOptions,
} from "./fair-lanes.js";
import { type Clock, systemClock, withDeadline } from "./resource.js";

export type { LaneLimits, QueuePriority } from "./fair-lanes.js";

/** Where the queue records client-go's workqueue metrics (children metrics.ts makes). */
export interface WorkQueueObserver {
  /** Keys added (de-duplicated adds are not counted). */
  adds: { inc(): void };
  depth: { set(n: number): void };
  /** Seconds a key waited between being added and being handed to a worker. */
  queueLatency: { observe(seconds: number): void };
  /** Seconds a worker held a key (from get to done). */
  workDuration: { observe(seconds: number): void };
  retries: { inc(): void };
}

export interface WorkQueueOptions {
  /** Per-key backoff and global token bucket of {@link WorkQueue.addRateLimited}. */
  backoff?: Partial<BackoffOptions>;
  rateLimit?: TokenBucketOptions;
  clock?: Clock;
  observer?: WorkQueueObserver;
  /** The flow of a key (the account its object uses), asked when it is added; absent: one. */
  flowOf?: (key: string) => string;
  /** Most keys of one flow held by workers at once, and of them from the lanes behind work. */
  flowLimit?: number;
  laneLimits?: LaneLimits;
}

/**
 * A keyed work queue with client-go's semantics: a key waiting is queued once; lanes and
 * flows (fair-lanes.ts); a key is held by one worker at a time, and one added meanwhile
 * is queued again at `done`; delays (`addAfter`: the earliest wins, in the higher lane;
 * `addRateLimited`); `shutDown` drops queued and delayed keys (level-triggered controllers
 * rebuild them from the cache) and `drain` waits for the keys in flight.
 */
export class WorkQueue {
  /** An entry is live while `dirty` holds its key in that lane and no worker holds it. */
  private readonly lanes: FairLanes;
  private readonly flowOfKey = new Map<string, string>();
  private readonly flowOf: (key: string) => string;
  /** Keys waiting or re-added while processed, with their lane. */
  private readonly dirty = new Map<string, QueuePriority>();
  /** Live entries in the lanes. */
  private waiting = 0;
  /** Keys held by workers, with the lane each came from and when. */
  private readonly processing = new Map<string, { priority: QueuePriority; started: number }>();
  private readonly addedAt = new Map<string, number>();
  /** Keys to add later, when and in which lane. */
  private readonly delayed = new Map<
    string,
    { at: number; timer: NodeJS.Timeout; priority: QueuePriority }
  >();
  private readonly retries: RetryRateLimiter;
  private readonly getters: Array<(key: string | undefined) => void> = [];
  private readonly drainers: Array<() => void> = [];
  private readonly clock: Clock;
  private readonly observer: WorkQueueObserver | undefined;
  private stopping = false;

  constructor(options: WorkQueueOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.retries = new RetryRateLimiter(options, this.clock);
    this.observer = options.observer;
    this.flowOf = options.flowOf ?? (() => "");
    this.lanes = new FairLanes(options.flowLimit ?? Number.POSITIVE_INFINITY, options.laneLimits);
  }

  /** Queues `key` unless it waits already (then an earlier lane moves it up). */
  add(key: string, priority: QueuePriority = "normal"): void {
    if (this.stopping) return;
    const lane = this.dirty.get(key);
    if (lane !== undefined) {
      if (servedBefore(priority, lane)) {
        this.dirty.set(key, priority);
        if (!this.processing.has(key)) {
          this.lanes.push(priority, this.flowOfKey.get(key) ?? "", key);
          this.pump();
        }
      }
      return;
    }
    this.observer?.adds.inc();
    this.dirty.set(key, priority);
    if (!this.processing.has(key)) this.flowOfKey.set(key, this.flowOf(key));
    this.addedAt.set(key, this.now());
    if (this.processing.has(key)) return;
    this.enqueue(key, priority);
  }

  /** Queues `key` after `delayMs`; an earlier pending delay of it wins, in the higher lane. */
  addAfter(key: string, delayMs: number, priority: QueuePriority = "normal"): void {
    if (this.stopping) return;
    if (delayMs <= 0) {
      this.add(key, priority);
      return;
    }
    const at = this.now() + delayMs;
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

  /** Queues `key` after its retry delay (fair-lanes.ts) and returns that delay. */
  addRateLimited(key: string): number {
    const delay = this.retries.when(key);
    this.observer?.retries.inc();
    this.addAfter(key, delay);
    return delay;
  }

  /** Resets the backoff of `key` (after a successful reconcile). */
  forget(key: string): void {
    this.retries.forget(key);
  }

  /** Failures counted for `key` since it was last forgotten. */
  numRequeues(key: string): number {
    return this.retries.failuresOf(key);
  }

  /** The next key to process, once there is one; `undefined` after shutdown. Then {@link done}. */
  get(): Promise<string | undefined> {
    if (this.stopping) return Promise.resolve(undefined);
    const next = this.next();
    if (next !== undefined) {
      this.startProcessing(next.key, next.priority);
      return Promise.resolve(next.key);
    }
    return new Promise((resolve) => this.getters.push(resolve));
  }

  /** The flow of a key waiting or held by a worker. */
  flowOfKeyNow(key: string): string | undefined {
    return this.flowOfKey.get(key);
  }

  /** True while a worker holds `key` (between `get` and `done`). */
  isProcessing(key: string): boolean {
    return this.processing.has(key);
  }

  /** The lane a key held by a worker came from; undefined when no worker holds it. */
  priorityOf(key: string): QueuePriority | undefined {
    return this.processing.get(key)?.priority;
  }

  /** Forgets that `key` was added while a worker held it: an add that asked for nothing. */
  cancelReadd(key: string): void {
    if (!this.processing.has(key) || !this.dirty.delete(key)) return;
    this.addedAt.delete(key);
  }

  /** Marks `key` as processed; if it was added meanwhile, it is queued again. */
  done(key: string): void {
    const held = this.processing.get(key);
    if (held === undefined) return;
    this.processing.delete(key);
    const flow = this.flowOfKey.get(key) ?? "";
    this.lanes.release(flow, held.priority);
    this.observer?.workDuration.observe((this.now() - held.started) / 1000);
    const lane = this.dirty.get(key);
    if (lane !== undefined && !this.stopping) {
      this.flowOfKey.set(key, this.flowOf(key));
      this.enqueue(key, lane);
    } else {
      this.flowOfKey.delete(key);
    }
    this.lanes.tidy(flow);
    // The flow may have been at its limit: its next key, or another's, can go now.
    this.pump();
    if (this.processing.size === 0) for (const d of this.drainers.splice(0)) d();
  }

  /** Keys waiting to be processed (not counting delayed or in-flight keys). */
  len(): number {
    return this.waiting;
  }

  inFlight(): number {
    return this.processing.size;
  }

  get isShuttingDown(): boolean {
    return this.stopping;
  }

  /** Stops handing out work: pending `get` calls resolve `undefined`, delays are dropped. */
  shutDown(): void {
    if (this.stopping) return;
    this.stopping = true;
    for (const { timer } of this.delayed.values()) clearTimeout(timer);
    this.delayed.clear();
    this.lanes.clear();
    this.waiting = 0;
    this.dirty.clear();
    this.addedAt.clear();
    this.observer?.depth.set(0);
    for (const g of this.getters.splice(0)) g(undefined);
  }

  /** Waits until no key is in flight, at most `timeoutMs`: true when drained, else false. */
  drain(timeoutMs: number): Promise<boolean> {
    if (this.processing.size === 0) return Promise.resolve(true);
    const drained = new Promise<boolean>((resolve) => this.drainers.push(() => resolve(true)));
    return withDeadline(drained, timeoutMs, () => false);
  }

  private enqueue(key: string, priority: QueuePriority): void {
    this.lanes.push(priority, this.flowOfKey.get(key) ?? "", key);
    this.waiting++;
    this.observer?.depth.set(this.waiting);
    this.pump();
  }

  /** Hands waiting keys to waiting workers while both exist. */
  private pump(): void {
    while (this.getters.length > 0) {
      const next = this.next();
      if (!next) return;
      this.startProcessing(next.key, next.priority);
      this.getters.shift()?.(next.key);
    }
  }

  /** The next live key of the flow in turn (fair-lanes.ts). */
  private next(): { key: string; priority: QueuePriority } | undefined {
    const next = this.lanes.next(
      (key, priority) => this.dirty.get(key) === priority && !this.processing.has(key),
    );
    if (next) this.waiting--;
    return next;
  }

  private startProcessing(key: string, priority: QueuePriority): void {
    this.lanes.hold(this.flowOfKey.get(key) ?? "", priority);
    const now = this.now();
    this.processing.set(key, { priority, started: now });
    this.dirty.delete(key);
    const added = this.addedAt.get(key);
    this.addedAt.delete(key);
    if (added !== undefined) this.observer?.queueLatency.observe((now - added) / 1000);
    this.observer?.depth.set(this.waiting);
  }

  private now(): number {
    return this.clock.now().getTime();
  }
}
