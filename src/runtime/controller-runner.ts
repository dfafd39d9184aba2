import type { Logger } from "pino";
import type { ControllerDefinition } from "./controller.js";
import { ControllerKeys } from "./controller-keys.js";
import { type ControllerRuntime, flowWorkers, laneWorkers } from "./controller-runtime.js";
import { looksSettled } from "./looks-settled.js";
import { formatKey, type KubeObject, objectKeyString } from "./resource.js";
import { type QueuePriority, WorkQueue } from "./workqueue.js";

/**
 * Runs one controller: makes its {@link WorkQueue}, has its informers' events feed it and
 * N workers reconcile its keys (controller-keys.ts), resyncs, and stops with a bounded drain.
 */
export class RunningController {
  private queue?: WorkQueue;
  private readonly keys: ControllerKeys;
  private unsubscribe: Array<() => void> = [];
  private workers: Promise<void>[] = [];
  private resyncTimer?: NodeJS.Timeout;
  private abort = new AbortController();
  private readonly log: Logger;

  constructor(
    readonly definition: ControllerDefinition,
    private readonly rt: ControllerRuntime,
  ) {
    this.log = rt.log.child({ controller: definition.name });
    this.keys = new ControllerKeys(definition, rt, this.log);
  }

  get running(): boolean {
    return this.queue !== undefined && !this.queue.isShuttingDown;
  }

  /** Starts the workers and enqueues every cached primary object. Caches must be synced. */
  start(): void {
    const def = this.definition;
    const concurrency = def.concurrency ?? this.rt.concurrency;
    const workers = this.rt.flowOf ? flowWorkers(concurrency).pool : concurrency;
    this.abort = new AbortController();
    const queue = new WorkQueue({
      clock: this.rt.clock,
      ...(this.rt.backoff ? { backoff: this.rt.backoff } : {}),
      ...(this.rt.retryRateLimit ? { rateLimit: this.rt.retryRateLimit } : {}),
      observer: this.rt.metrics.workQueueObserver(def.name),
      ...(this.rt.flowOf
        ? { flowOf: this.keys.flowOf(this.rt.flowOf), flowLimit: flowWorkers(concurrency).perFlow }
        : {}),
      laneLimits: laneWorkers(concurrency),
    });
    this.queue = queue;
    this.rt.metrics.maxConcurrentReconciles.set({ controller: def.name }, workers);
    this.rt.metrics.activeWorkers.set({ controller: def.name }, 0);
    // Counters at 0 before the first reconcile: a rate over no series is empty, not 0.
    for (const result of ["success", "error", "requeue_after"]) {
      this.rt.metrics.reconcileTotal.inc({ controller: def.name, result }, 0);
    }
    this.rt.metrics.reconcileErrors.inc({ controller: def.name }, 0);
    this.rt.metrics.terminalReconcileErrors.inc({ controller: def.name }, 0);
    this.unsubscribe.push(...this.keys.subscribe(queue));
    // For a settled object the initial list is a routine look: objects with work go first.
    for (const obj of this.rt.cache.informerFor(def.primary).store.list()) {
      queue.add(objectKeyString(obj), this.laneOf(obj));
    }
    this.addExtraKeys();
    const signal = this.abort.signal;
    this.workers = Array.from({ length: workers }, () => this.keys.work(queue, signal));
    this.scheduleResync();
    this.log.info({ workers }, "controller started");
  }

  /** Stops taking work, waits up to `timeoutMs` for reconciles, then aborts them; true: in time. */
  async stop(timeoutMs: number): Promise<boolean> {
    const queue = this.queue;
    if (!queue) return true;
    for (const u of this.unsubscribe.splice(0)) u();
    clearTimeout(this.resyncTimer);
    queue.shutDown();
    const drained = await queue.drain(timeoutMs);
    if (!drained) {
      this.log.warn(
        { inFlight: queue.inFlight() },
        "reconciles still running after the shutdown bound; aborting them",
      );
      this.abort.abort(new Error("controller shutting down"));
    } else {
      await Promise.all(this.workers);
    }
    this.log.info("controller stopped");
    return drained;
  }

  /** Aborts the reconciles in flight now, e.g. when leadership is lost during a drain. */
  abortReconciles(reason: string): void {
    this.abort.abort(new Error(reason));
  }

  /** Reconciles every cached key again; `clearTerminal`: the held ones too (new API key). */
  requeueAll(clearTerminal: boolean, matches?: (obj: KubeObject) => boolean): void {
    if (!this.queue) return;
    const { terminal, echoes } = this.keys;
    const all = this.rt.cache.list(this.definition.primary);
    const objects = matches ? all.filter(matches) : all;
    if (clearTerminal && matches) {
      for (const obj of objects) terminal.succeeded(objectKeyString(obj));
    } else if (clearTerminal) {
      terminal.clear(objects.map(objectKeyString));
    }
    for (const obj of objects) {
      const key = objectKeyString(obj);
      if (!terminal.has(key)) {
        echoes.markRerun(key);
        this.queue.add(key, this.laneOf(obj));
      }
    }
  }

  /** The lane of a key enqueued from the cache (start, resync): low when settled. */
  private laneOf(obj: KubeObject): QueuePriority {
    return (this.definition.settled ?? looksSettled)(obj) ? "low" : "normal";
  }

  heldKeys(): string[] {
    return this.keys.terminal.keys();
  }

  /** Enqueues the keys that stand for no primary object (`extraKeys`), if any. */
  private addExtraKeys(): void {
    for (const key of this.definition.extraKeys?.() ?? []) this.queue?.add(formatKey(key));
  }

  private scheduleResync(): void {
    const period = this.rt.resyncPeriodMs;
    if (period <= 0) return;
    const delay = period * (1 + Math.random() * this.rt.resyncJitter);
    this.resyncTimer = setTimeout(() => {
      this.requeueAll(false);
      this.addExtraKeys();
      this.scheduleResync();
    }, delay);
    this.resyncTimer.unref();
  }
}
