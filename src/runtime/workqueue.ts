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
  /**
   * The flow of a key (e.g. the account its object calls the service with), asked when
   * the key is added; keys of one flow are handed out in order, flows in turn. Absent:
   * one flow.
   */
  flowOf?: (key: string) => string;
  /**
   * Most keys of one flow held by workers at once (the rest of the workers stay free
   * for the other flows). Default: no bound.
   */
  flowLimit?: number;
}

/**
 * A key's lane. `normal`: work to do (a new or changed object, a create in progress, a
 * retry). `low`: a routine look (a periodic poll of a settled object, a resync, the
 * initial list); it is handed out only when no normal key waits, so that a new object
 * is not stuck behind a full sweep of polls when the service's rate limit is the bound.
 */
export type QueuePriority = "normal" | "low";

/** Default global retry rate limit (client-go's): 10 per second, burst 100. */
export const DEFAULT_RETRY_RATE_LIMIT: TokenBucketOptions = { qps: 10, burst: 100 };

/**
 * A keyed work queue with client-go's semantics:
 *
 * - **De-duplication**: a key added while already waiting is queued once.
 * - **Two priorities**: `low` keys are handed out only when no `normal` key waits; a
 *   waiting low key added again as normal moves to the normal lane (never back down).
 * - **Fair flows** (API Priority and Fairness's fair queuing): with `flowOf`, each flow
 *   has its own lanes, flows are served in turn, and one flow holds at most
 *   `flowLimit` workers, so that a flow with a backlog delays another's keys by at most
 *   one turn.
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
  /**
   * The lanes, in order. An entry is live while `dirty` holds its key in that lane and
   * no worker holds it; a key moved to the normal lane leaves a dead entry behind in
   * the low one, skipped when reached.
   */
  private readonly lanes: Record<QueuePriority, Map<string, string[]>> = {
    normal: new Map(),
    low: new Map(),
  };
  /** The flows in the order of their turns; the next turn starts at `turn`. */
  private readonly flows: string[] = [];
  private turn = 0;
  /** Keys held by workers per flow. */
  private readonly busy = new Map<string, number>();
  /** The flow of each key waiting or held. */
  private readonly flowOfKey = new Map<string, string>();
  private readonly flowOf: (key: string) => string;
  private readonly flowLimit: number;
  /** Keys waiting or re-added while processed, with their lane. */
  private readonly dirty = new Map<string, QueuePriority>();
  /** Live entries in the lanes. */
  private waiting = 0;
  /** Keys held by workers, with the lane each came from. */
  private readonly processing = new Map<string, QueuePriority>();
  private readonly addedAt = new Map<string, number>();
  private readonly startedAt = new Map<string, number>();
  private readonly delayed = new Map<
    string,
    { at: number; timer: NodeJS.Timeout; priority: QueuePriority }
  >();
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
    this.flowOf = options.flowOf ?? (() => "");
    this.flowLimit = Math.max(1, options.flowLimit ?? Number.POSITIVE_INFINITY);
  }

  /**
   * Queues `key` now unless it is already waiting (a waiting low key added as normal
   * moves up); ignored after shutdown.
   */
  add(key: string, priority: QueuePriority = "normal"): void {
    if (this.stopping) return;
    const lane = this.dirty.get(key);
    if (lane !== undefined) {
      if (lane === "low" && priority === "normal") {
        this.dirty.set(key, "normal");
        if (!this.processing.has(key)) {
          this.laneOf("normal", this.flowOfKey.get(key) ?? "").push(key);
          this.pump();
        }
      }
      return;
    }
    this.observer?.added();
    this.dirty.set(key, priority);
    if (!this.processing.has(key)) this.flowOfKey.set(key, this.flowOf(key));
    this.addedAt.set(key, this.now());
    if (this.processing.has(key)) return;
    this.enqueue(key, priority);
  }

  /**
   * Queues `key` after `delayMs`; an earlier pending delay of the same key wins, and
   * keeps the higher of both priorities.
   */
  addAfter(key: string, delayMs: number, priority: QueuePriority = "normal"): void {
    if (this.stopping) return;
    if (delayMs <= 0) {
      this.add(key, priority);
      return;
    }
    const at = this.now() + delayMs;
    const pending = this.delayed.get(key);
    if (pending && pending.at <= at) {
      if (priority === "normal") pending.priority = "normal";
      return;
    }
    if (pending) clearTimeout(pending.timer);
    const entry = {
      at,
      priority: pending?.priority === "normal" ? ("normal" as const) : priority,
      timer: setTimeout(() => {
        this.delayed.delete(key);
        this.add(key, entry.priority);
      }, delayMs),
    };
    this.delayed.set(key, entry);
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
    return this.processing.get(key);
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
    const flow = this.flowOfKey.get(key) ?? "";
    this.busy.set(flow, (this.busy.get(flow) ?? 1) - 1);
    const started = this.startedAt.get(key);
    this.startedAt.delete(key);
    if (started !== undefined) this.observer?.workDuration((this.now() - started) / 1000);
    const lane = this.dirty.get(key);
    if (lane !== undefined && !this.stopping) {
      this.flowOfKey.set(key, this.flowOf(key));
      this.enqueue(key, lane);
    } else {
      this.flowOfKey.delete(key);
    }
    this.tidy(flow);
    // The flow may have been at its limit: its next key, or another's, can go now.
    this.pump();
    if (this.processing.size === 0) for (const d of this.drainers.splice(0)) d();
  }

  /** Keys waiting to be processed (not counting delayed or in-flight keys). */
  len(): number {
    return this.waiting;
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
    this.lanes.normal.clear();
    this.lanes.low.clear();
    this.waiting = 0;
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

  private enqueue(key: string, priority: QueuePriority): void {
    this.laneOf(priority, this.flowOfKey.get(key) ?? "").push(key);
    this.waiting++;
    this.observer?.depth(this.waiting);
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

  /** The lane of `flow` in `priority`, created with the flow's first key. */
  private laneOf(priority: QueuePriority, flow: string): string[] {
    let lane = this.lanes[priority].get(flow);
    if (!lane) {
      lane = [];
      this.lanes[priority].set(flow, lane);
      if (!this.flows.includes(flow)) this.flows.push(flow);
    }
    return lane;
  }

  /**
   * The first live entry of the next flow in turn below its limit, normal lanes first;
   * dead entries on the way are dropped, and so are emptied lanes.
   */
  private next(): { key: string; priority: QueuePriority } | undefined {
    const n = this.flows.length;
    for (const priority of ["normal", "low"] as const) {
      const lanes = this.lanes[priority];
      for (let i = 0; i < n; i++) {
        const flow = this.flows[(this.turn + i) % n] as string;
        const lane = lanes.get(flow);
        if (!lane || (this.busy.get(flow) ?? 0) >= this.flowLimit) continue;
        let key = lane.shift();
        while (
          key !== undefined &&
          (this.dirty.get(key) !== priority || this.processing.has(key))
        ) {
          key = lane.shift();
        }
        if (lane.length === 0) lanes.delete(flow);
        if (key === undefined) continue;
        this.waiting--;
        this.turn = (this.turn + i + 1) % n;
        return { key, priority };
      }
    }
    return undefined;
  }

  /** Forgets a flow with no lane and no worker (its turn goes with it). */
  private tidy(flow: string): void {
    if (this.lanes.normal.has(flow) || this.lanes.low.has(flow)) return;
    if ((this.busy.get(flow) ?? 0) > 0) return;
    this.busy.delete(flow);
    const index = this.flows.indexOf(flow);
    if (index < 0) return;
    this.flows.splice(index, 1);
    if (this.turn > index) this.turn--;
    if (this.turn >= this.flows.length) this.turn = 0;
  }

  private startProcessing(key: string, priority: QueuePriority): void {
    const flow = this.flowOfKey.get(key) ?? "";
    this.busy.set(flow, (this.busy.get(flow) ?? 0) + 1);
    this.processing.set(key, priority);
    this.dirty.delete(key);
    const added = this.addedAt.get(key);
    this.addedAt.delete(key);
    if (added !== undefined) this.observer?.queueLatency((this.now() - added) / 1000);
    this.startedAt.set(key, this.now());
    this.observer?.depth(this.waiting);
  }

  private now(): number {
    return this.clock.now().getTime();
  }
}
