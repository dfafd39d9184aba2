import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { InformerCache } from "./cache.js";
import type { ControllerDefinition, ReconcileContext } from "./controller.js";
import type { ControllerRuntime } from "./controller-runtime.js";
import {
  errorMessage,
  errorReason,
  isExternalHold,
  isTerminal,
  RetryableError,
  requeueAfterOf,
} from "./errors.js";
import { looksSettled } from "./looks-settled.js";
import { OwnWriteEchoFilter } from "./own-write-echoes.js";
import { withReconcilePriority } from "./priority.js";
import { runWithDeadline } from "./reconcile-deadline.js";
import { withReconcileTarget } from "./reconcile-target.js";
import { formatKey, type KubeObject, objectKeyString, parseKey } from "./resource.js";
import type { StoreEvent } from "./store.js";
import { TerminalHolds } from "./terminal-holds.js";
import { type QueuePriority, WorkQueue } from "./workqueue.js";
import { ConflictError } from "./writes.js";

/**
 * Runs one controller: subscribes to its informers (a primary object's status-only
 * change enqueues nothing), feeds keys to a {@link WorkQueue},
 * runs N workers, applies the error policy (retryable → backoff; terminal → hold the
 * key until the object changes), requeues after `requeueAfterMs`, resyncs
 * periodically, and stops with a bounded drain.
 */
export class RunningController {
  private queue?: WorkQueue;
  /** Keys held by a terminal error until their object changes (or a slow retry). */
  private readonly terminal: TerminalHolds;
  /** Which primary changes ask for nothing (status alone, the echo of an own write). */
  private readonly echoes: OwnWriteEchoFilter;
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

  /** True between start and stop. */
  get running(): boolean {
    return this.queue !== undefined && !this.queue.isShuttingDown;
  }

  /** Starts the workers and enqueues every cached primary object. Caches must be synced. */
  start(): void {
    const def = this.definition;
    const workers = def.concurrency ?? this.rt.concurrency;
    this.abort = new AbortController();
    this.queue = new WorkQueue({
      clock: this.rt.clock,
      ...(this.rt.backoff ? { backoff: this.rt.backoff } : {}),
      ...(this.rt.retryRateLimit ? { rateLimit: this.rt.retryRateLimit } : {}),
      observer: this.rt.metrics.workQueueObserver(def.name),
    });
    this.rt.metrics.maxConcurrentReconciles.set({ controller: def.name }, workers);
    this.rt.metrics.activeWorkers.set({ controller: def.name }, 0);
    const primary = this.rt.cache.informerFor(def.primary);
    this.unsubscribe.push(primary.on((ev) => this.onPrimary(ev)));
    for (const w of def.watches) {
      this.unsubscribe.push(
        this.rt.cache.informerFor(w.resource).on((ev) => this.onWatched(ev, w.map)),
      );
    }
    // For a settled object the initial list is a routine look: objects with work
    // (and any that change meanwhile) go first.
    for (const obj of primary.store.list()) {
      this.queue.add(objectKeyString(obj), this.laneOf(obj));
    }
    this.workers = Array.from({ length: workers }, () => this.work());
    this.scheduleResync();
    this.log.info({ workers }, "controller started");
  }

  /**
   * Stops taking work, waits up to `timeoutMs` for in-flight reconciles, then aborts
   * their signal. Resolves true when everything finished within the bound.
   */
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

  /**
   * Reconciles every cached key again; with `clearTerminal`, also the keys held by a
   * terminal error (e.g. after the API key changed).
   */
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

  /** Keys currently held by a terminal error. */
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
    // A change of status alone, or the echo of this process's own write, asks for
    // nothing (see own-write-echoes.ts); spec (generation), annotations, labels,
    // finalizers and deletion still enqueue.
    if (this.echoes.asksForNothing(ev)) return;
    if (ev.type !== "delete" && this.terminal.holdsUnchanged(key, ev.object)) return;
    this.echoes.noteAdd(key, ev);
    this.terminal.release(key);
    this.queue?.add(key);
  }

  private onWatched(
    ev: StoreEvent,
    map: (obj: KubeObject, cache: InformerCache) => { namespace: string; name: string }[],
  ): void {
    const keys = new Set<string>();
    for (const obj of ev.old ? [ev.object, ev.old] : [ev.object]) {
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
        await this.reconcileKey(queue, key);
      } finally {
        this.echoes.forget(key);
        queue.done(key);
      }
    }
  }

  private async reconcileKey(queue: WorkQueue, keyString: string): Promise<void> {
    const def = this.definition;
    const labels = { controller: def.name };
    const key = parseKey(keyString);
    const reconcileId = randomUUID();
    const log = this.log.child({ key: keyString, reconcileId });
    const ctx: ReconcileContext = {
      controller: def.name,
      key,
      reconcileId,
      kube: this.rt.kube,
      cache: this.rt.cache,
      clock: this.rt.clock,
      log,
      events: this.rt.events,
      metrics: this.rt.metrics,
      signal: this.abort.signal,
    };
    const started = this.rt.clock.now().getTime();
    this.rt.metrics.activeWorkers.inc(labels);
    try {
      // Calls made by a routine poll wait at the service's rate limit behind calls
      // with work to do (see priority.ts).
      const priority = queue.priorityOf(keyString) ?? "normal";
      const result = await runWithDeadline(this.rt.reconcileTimeoutMs ?? 0, ctx.signal, (signal) =>
        withReconcilePriority(priority, () =>
          withReconcileTarget({ resource: def.primary, key }, () =>
            def.reconcile(key, { ...ctx, signal }),
          ),
        ),
      );
      // Re-adds that were all the echo of this reconcile's own writes ask for nothing.
      if (this.echoes.onlyOwnEchoes(keyString)) queue.cancelReadd(keyString);
      this.terminal.succeeded(keyString);
      queue.forget(keyString);
      const after = result?.requeueAfterMs;
      if (after !== undefined && after > 0) {
        queue.addAfter(keyString, after, result?.lowPriority ? "low" : "normal");
        this.rt.metrics.reconcileTotal.inc({ ...labels, result: "requeue_after" });
      } else {
        this.rt.metrics.reconcileTotal.inc({ ...labels, result: "success" });
      }
      log.debug({ requeueAfterMs: after }, "reconciled");
    } catch (err) {
      // As after a success: re-adds that were all the echo of this reconcile's own
      // writes (e.g. a create's pending marker written and removed around a refused
      // call) ask for nothing; the error's own policy (a hold, a backoff) says when to
      // run again, not an immediate re-run that would repeat the refused call.
      if (this.echoes.onlyOwnEchoes(keyString)) queue.cancelReadd(keyString);
      this.rt.metrics.reconcileTotal.inc({ ...labels, result: "error" });
      this.rt.metrics.reconcileErrors.inc(labels);
      const obj = this.rt.cache.get(def.primary, key);
      const reason = errorReason(err);
      if (isTerminal(err)) {
        this.rt.metrics.terminalReconcileErrors.inc(labels);
        queue.forget(keyString);
        const retryInMs = this.terminal.hold(keyString, obj, isExternalHold(err));
        if (retryInMs !== undefined) {
          // The far side may recover by itself (a key accepted again, an operation
          // back): look again on a slow backoff, besides any change of the object.
          queue.addAfter(keyString, retryInMs);
          log.warn(
            { err, reason, retryInMs },
            "reconcile failed terminally for a reason outside the object; retrying slowly",
          );
        } else {
          log.warn(
            { err, reason },
            "reconcile failed terminally; waiting for a change of the object",
          );
        }
      } else {
        // A failure that says when to retry (a saturated client-side rate limit) is
        // retried then, not on the key's backoff, which would spin while it waits.
        const asked = requeueAfterOf(err);
        if (asked !== undefined) queue.addAfter(keyString, asked);
        const retryInMs = asked ?? queue.addRateLimited(keyString);
        // A conflict only means the cache was behind the object (often our own last
        // write): the retry follows at once, so it is no warning, no Event and no
        // error-policy write (which would conflict the same way).
        if (err instanceof ConflictError) {
          log.debug({ err, reason, retryInMs }, "reconcile conflicted; will retry");
          return;
        }
        log.warn({ err, reason, retryInMs }, "reconcile failed; will retry");
      }
      if (obj) {
        // An expected wait (a referenced object on its way) is news, not a warning.
        if (err instanceof RetryableError && err.waiting) {
          this.rt.events.normal(obj, reason, errorMessage(err));
        } else {
          this.rt.events.warning(obj, reason, errorMessage(err));
        }
      }
      if (def.errorPolicy) {
        try {
          await def.errorPolicy(key, err, ctx);
        } catch (policyErr) {
          if (policyErr instanceof ConflictError) {
            // A retryable error is retried anyway; a terminal one would not be, and its
            // condition never written (the cache was behind the reconcile's own write,
            // whose echo is ignored): run once more when the cache has caught up.
            if (isTerminal(err)) queue.addRateLimited(keyString);
            log.debug({ err: policyErr }, "error policy conflicted; the retry records it");
          } else {
            log.error({ err: policyErr }, "error policy failed");
          }
        }
      }
    } finally {
      this.rt.metrics.activeWorkers.dec(labels);
      this.rt.metrics.reconcileTime.observe(
        labels,
        (this.rt.clock.now().getTime() - started) / 1000,
      );
    }
  }

  private scheduleResync(): void {
    const period = this.rt.resyncPeriodMs;
    if (period <= 0) return;
    const delay = period * (1 + Math.random() * this.rt.resyncJitter);
    this.resyncTimer = setTimeout(() => {
      this.requeueAll(false);
      this.scheduleResync();
    }, delay);
    this.resyncTimer.unref();
  }
}
