import { setImmediate } from "node:timers/promises";
import type { Logger } from "pino";
import type { ControllerDefinition, WatchSpec } from "./controller.js";
import { type ControllerRuntime, flowWorkers, laneWorkers } from "./controller-runtime.js";
import type { StoreEvent } from "./informer-store.js";
import { looksSettled } from "./looks-settled.js";
import { nonStatusFingerprint, reconcileKey, TerminalHolds } from "./reconcile-attempt.js";
import { formatKey, type KubeObject, objectKeyString, parseKey } from "./resource.js";
import { type QueuePriority, WorkQueue } from "./workqueue.js";

/**
 * Runs one controller: feeds the keys of its informers' events to a {@link WorkQueue}
 * ({@link OwnWriteEchoFilter} says which ask for nothing), runs N workers that reconcile
 * a key each (reconcile-attempt.ts), resyncs, and stops with a bounded drain.
 */
export class RunningController {
  private queue?: WorkQueue;
  private readonly terminal: TerminalHolds;
  private readonly echoes: OwnWriteEchoFilter;
  /** Routine looks that reached the deadline in a row, by key (reconcile-attempt.ts). */
  private readonly quietTimeouts = new Map<string, number>();
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
    this.terminal = new TerminalHolds(rt.holdBackoff);
    this.echoes = new OwnWriteEchoFilter({
      isOwnWrite: (obj) => rt.kube.isOwnWrite(definition.primary, obj),
      isProcessing: (key) => this.queue?.isProcessing(key) ?? false,
    });
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
    this.queue = new WorkQueue({
      clock: this.rt.clock,
      ...(this.rt.backoff ? { backoff: this.rt.backoff } : {}),
      ...(this.rt.retryRateLimit ? { rateLimit: this.rt.retryRateLimit } : {}),
      observer: this.rt.metrics.workQueueObserver(def.name),
      ...(this.rt.flowOf
        ? { flowOf: this.flowOf(this.rt.flowOf), flowLimit: flowWorkers(concurrency).perFlow }
        : {}),
      laneLimits: laneWorkers(concurrency),
    });
    this.rt.metrics.maxConcurrentReconciles.set({ controller: def.name }, workers);
    this.rt.metrics.activeWorkers.set({ controller: def.name }, 0);
    // Counters at 0 before the first reconcile: a rate over no series is empty, not 0.
    for (const result of ["success", "error", "requeue_after"]) {
      this.rt.metrics.reconcileTotal.inc({ controller: def.name, result }, 0);
    }
    this.rt.metrics.reconcileErrors.inc({ controller: def.name }, 0);
    this.rt.metrics.terminalReconcileErrors.inc({ controller: def.name }, 0);
    const primary = this.rt.cache.informerFor(def.primary);
    this.unsubscribe.push(primary.on((ev) => this.onPrimary(ev)));
    for (const w of def.watches) {
      this.unsubscribe.push(
        this.rt.cache.informerFor(w.resource).on((ev) => this.onWatched(ev, w)),
      );
    }
    // For a settled object the initial list is a routine look: objects with work go first.
    for (const obj of primary.store.list()) {
      this.queue.add(objectKeyString(obj), this.laneOf(obj));
    }
    this.addExtraKeys();
    this.workers = Array.from({ length: workers }, () => this.work());
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
    const all = this.rt.cache.list(this.definition.primary);
    const objects = matches ? all.filter(matches) : all;
    if (clearTerminal && matches) {
      for (const obj of objects) this.terminal.succeeded(objectKeyString(obj));
    } else if (clearTerminal) {
      this.terminal.clear(objects.map(objectKeyString));
    }
    for (const obj of objects) {
      const key = objectKeyString(obj);
      if (!this.terminal.has(key)) {
        this.echoes.markRerun(key);
        this.queue.add(key, this.laneOf(obj));
      }
    }
  }

  /** The lane of a key enqueued from the cache (start, resync): low when settled. */
  private laneOf(obj: KubeObject): QueuePriority {
    return (this.definition.settled ?? looksSettled)(obj) ? "low" : "normal";
  }

  /** A key's flow: its primary object's, as cached. */
  private flowOf(flowOf: NonNullable<ControllerRuntime["flowOf"]>): (key: string) => string {
    return (key) => flowOf(this.rt.cache.get(this.definition.primary, key));
  }

  heldKeys(): string[] {
    return this.terminal.keys();
  }

  private onPrimary(ev: StoreEvent): void {
    const key = objectKeyString(ev.object);
    if (this.definition.primaryStatusChanges) {
      // The controller acts on status another controller writes: every change counts.
      this.terminal.release(key);
      this.echoes.markRerun(key);
      this.queue?.add(key);
      return;
    }
    // Spec (generation), annotations, labels, finalizers and deletion enqueue.
    if (this.echoes.asksForNothing(ev)) return;
    if (ev.type !== "delete" && this.terminal.holdsUnchanged(key, ev.object)) return;
    this.echoes.noteAdd(key, ev);
    this.terminal.release(key);
    this.queue?.add(key);
  }

  private onWatched(ev: StoreEvent, { map, when }: WatchSpec): void {
    if (when?.events && !when.events.includes(ev.type)) return;
    const keys = new Set<string>();
    for (const obj of ev.old ? [ev.object, ev.old] : [ev.object]) {
      if (when?.reasons && !hasReason(obj, when.reasons)) continue;
      try {
        for (const k of map(obj, this.rt.cache)) keys.add(formatKey(k));
      } catch (err) {
        this.log.error({ err }, "watch mapping failed");
      }
    }
    for (const key of keys) {
      this.terminal.release(key);
      this.echoes.markRerun(key);
      this.queue?.add(key);
    }
  }

  private async work(): Promise<void> {
    const queue = this.queue;
    if (!queue) return;
    for (let key = await queue.get(); key !== undefined; key = await queue.get()) {
      try {
        await reconcileKey(
          {
            definition: this.definition,
            rt: this.rt,
            log: this.log,
            queue,
            signal: this.abort.signal,
            terminal: this.terminal,
            echoes: this.echoes,
            quietTimeouts: this.quietTimeouts,
          },
          key,
        );
      } finally {
        this.echoes.forget(key);
        queue.done(key);
      }
      // A reconcile that awaited nothing real (answered from the cache) ends in microtasks:
      // a turn of the event loop between keys keeps a burst of them from starving I/O.
      await setImmediate();
    }
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

function hasReason(obj: KubeObject, reasons: ReadonlySet<string>): boolean {
  const status = obj.status as { conditions?: { reason?: string }[] } | undefined;
  return status?.conditions?.some((c) => c.reason !== undefined && reasons.has(c.reason)) ?? false;
}

/**
 * Which events of a controller's primary objects re-run their key: not a change of status
 * alone, nor the echo of this process's own write (its reconcile already acted). An echo
 * arriving before the write's answer re-adds the key; {@link onlyOwnEchoes} looks later.
 */
export class OwnWriteEchoFilter {
  /** Per key being reconciled: resourceVersions of updates that may echo its writes. */
  private readonly maybeEchoes = new Map<string, string[]>();
  /** Keys being reconciled that something other than a possible echo re-added. */
  private readonly rerun = new Set<string>();

  constructor(
    private readonly deps: {
      isOwnWrite(obj: KubeObject): boolean;
      isProcessing(key: string): boolean;
    },
  ) {}

  /** True when a primary object's event asks for no reconcile (adds and deletes always do). */
  asksForNothing(ev: StoreEvent): boolean {
    if (ev.type !== "update") return false;
    if (ev.old && nonStatusFingerprint(ev.old) === nonStatusFingerprint(ev.object)) return true;
    return !specChanged(ev) && this.deps.isOwnWrite(ev.object);
  }

  /** `ev` adds `key`: while it is reconciled, an update may echo a write not answered yet. */
  noteAdd(key: string, ev: StoreEvent): void {
    const rv = ev.object.metadata?.resourceVersion;
    if (ev.type === "update" && rv && !specChanged(ev) && this.deps.isProcessing(key)) {
      this.maybeEchoes.set(key, [...(this.maybeEchoes.get(key) ?? []), rv]);
    } else {
      this.markRerun(key);
    }
  }

  /** An add of a key being reconciled that is surely not an echo: it must run again. */
  markRerun(key: string): void {
    if (this.deps.isProcessing(key)) this.rerun.add(key);
  }

  /** After a reconcile of `key`: true when all that re-added it meanwhile echoed its writes. */
  onlyOwnEchoes(key: string): boolean {
    const versions = this.maybeEchoes.get(key);
    this.maybeEchoes.delete(key);
    const mustRerun = this.rerun.delete(key);
    if (!versions || mustRerun) return false;
    const { namespace, name } = parseKey(key);
    return versions.every((resourceVersion) =>
      this.deps.isOwnWrite({ metadata: { namespace, name, resourceVersion } }),
    );
  }

  forget(key: string): void {
    this.maybeEchoes.delete(key);
    this.rerun.delete(key);
  }
}

function specChanged(ev: StoreEvent): boolean {
  return ev.old?.metadata?.generation !== ev.object.metadata?.generation;
}
