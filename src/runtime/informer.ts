import type { Logger } from "pino";
import { DEFAULT_WATCHDOG_MS } from "./defaults.js";
import type { InformerHandler, InformerStore, StoreEvent } from "./informer-store.js";
import { silentWatchHeld } from "./kube-errors.js";
import { type ListerWatcher, type WatchHandle, type WatchOutcome, watchEnd } from "./listwatch.js";
import { cacheId, type KubeObject, type ResourceDescriptor, withKind } from "./resource.js";

export interface InformerOptions {
  /** Namespaces to watch; none: all (and cluster-scoped kinds). */
  namespaces?: string[];
  /** The first restart's delay after an error (500 ms), doubling up to `maxBackoffMs` (30 s). */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** A watch silent this long (not even a bookmark) is ended and listed again. Default 5 min. */
  watchdogMs?: number;
  log?: Logger;
  /** Told of each failed list or watch, and of a watch answered after one (cache-sync.ts). */
  onWatchChange?: () => void;
}

/**
 * A list+watch cache of one kind that never stops silently: each scope (a namespace, or
 * all) lists, then watches from the last resourceVersion seen; an error restarts it after
 * a backoff, and what a watch may have missed (410 Gone, a line that is not an event, a
 * front holding it, `watchdogMs` of silence) lists again, delivering deletes.
 */
export class Informer<S extends InformerStore = InformerStore> {
  private readonly handlers: InformerHandler[] = [];
  private readonly scopes: Scope[];
  private readonly syncWaiters: Array<() => void> = [];

  constructor(
    readonly resource: ResourceDescriptor,
    readonly store: S,
    listerWatcher: (namespace: string | undefined) => ListerWatcher,
    readonly options: InformerOptions = {},
  ) {
    const namespaces =
      resource.namespaced && options.namespaces && options.namespaces.length > 0
        ? options.namespaces
        : [undefined];
    this.scopes = namespaces.map((ns) => new Scope(this, ns, listerWatcher(ns)));
  }

  /** Registers a handler of store changes; returns a function that removes it. */
  on(handler: InformerHandler): () => void {
    this.handlers.push(handler);
    return () => {
      const i = this.handlers.indexOf(handler);
      if (i >= 0) this.handlers.splice(i, 1);
    };
  }

  start(): void {
    for (const s of this.scopes) s.start();
  }

  /** Stops the loops and aborts the watches. */
  async stop(): Promise<void> {
    await Promise.all(this.scopes.map((s) => s.stop()));
    for (const w of this.syncWaiters.splice(0)) w();
  }

  hasSynced(): boolean {
    return this.scopes.every((s) => s.synced);
  }

  /** The error of a scope whose last list or watch failed, until its watch is answered again. */
  lastError(): unknown {
    return this.scopes.find((s) => s.lastError !== undefined)?.lastError;
  }

  isWatching(): boolean {
    return this.scopes.every((s) => s.watching);
  }

  /** Resolves when {@link hasSynced} becomes true (or the informer is stopped). */
  waitForSync(): Promise<void> {
    if (this.hasSynced()) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  /** @internal Called by scopes. */
  emit(events: StoreEvent[]): void {
    for (const ev of events) {
      for (const h of [...this.handlers]) {
        try {
          h(ev);
        } catch (err) {
          this.options.log?.error({ err }, "informer handler failed");
        }
      }
    }
  }

  /** @internal Called by scopes after a list. */
  scopeSynced(): void {
    if (this.hasSynced()) for (const w of this.syncWaiters.splice(0)) w();
  }
}

/** One list+watch loop of an {@link Informer}. */
class Scope {
  synced = false;
  watching = false;
  /** Of its last list or watch, until a watch is answered. */
  lastError: unknown;
  private resourceVersion = "";
  /** The silence of the last watch when the watchdog ended it, until the list after it. */
  private silentMs: number | undefined;
  private stopped = true;
  private loop?: Promise<void>;
  private interrupt?: () => void;
  private readonly log: Logger | undefined;

  constructor(
    private readonly informer: Informer,
    private readonly namespace: string | undefined,
    private readonly lw: ListerWatcher,
  ) {
    this.log = informer.options.log?.child({
      resource: cacheId(informer.resource),
      namespace: namespace ?? "*",
    });
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.interrupt?.();
    await this.loop;
  }

  private async run(): Promise<void> {
    const initial = this.informer.options.initialBackoffMs ?? 500;
    const max = this.informer.options.maxBackoffMs ?? 30_000;
    let failures = 0;
    while (!this.stopped) {
      let outcome: WatchOutcome;
      try {
        if (!this.resourceVersion) await this.relist();
        outcome = await this.watchOnce();
      } catch (err) {
        outcome = { kind: "error", err };
      }
      if (outcome.kind === "stopped") break;
      // A watch a front let through only at its cut brought its events, late: not a failure.
      if (outcome.kind === "gone" || outcome.kind === "checked" || outcome.kind === "held") {
        if (outcome.kind === "gone") this.log?.info("watch answered 410 Gone; relisting");
        if (outcome.kind === "held") this.log?.warn(outcome.err.message);
        this.resourceVersion = "";
        failures = 0;
        continue;
      }
      if (outcome.kind === "silent") {
        const watchdogMs = this.informer.options.watchdogMs ?? DEFAULT_WATCHDOG_MS;
        this.log?.info({ watchdogMs }, "watch silent; listing again");
        // Its connection may be dead (see listwatch.ts), or a front holds it: the next
        // watch checks the one, the list once it is answered shows what the other kept back.
        this.lw.silent?.(watchdogMs);
        this.silentMs = watchdogMs;
        continue;
      }
      // A stream that closes at once without events is a failure (a server dropping watches).
      if (outcome.kind === "closed" && (outcome.events > 0 || outcome.ms >= 1000)) {
        failures = 0;
        continue;
      }
      failures++;
      const delay = Math.min(initial * 2 ** (failures - 1), max);
      const more = { delayMs: delay, failures };
      if (outcome.kind === "relist") {
        // An unread line, or a watch held unanswered: only a list is sure to show what changed.
        this.resourceVersion = "";
        this.failed(outcome.err, "watch failed; relisting", more);
      } else {
        const err = outcome.kind === "error" ? outcome.err : new Error("closed at once, no events");
        this.failed(err, "list/watch failed; retrying", more);
      }
      await this.sleep(delay);
    }
    this.watching = false;
  }

  private async relist(): Promise<void> {
    const list = await this.interruptible(this.lw.list());
    if (this.stopped || !list) return;
    const items = list.items.map((o) => withKind(this.informer.resource, o));
    const events = this.informer.store.replace(items, this.namespace);
    if (this.silentMs !== undefined && events.length > 0) {
      this.log?.warn({ changes: events.length }, silentWatchHeld(this.silentMs));
    }
    this.silentMs = undefined;
    this.informer.emit(events);
    this.resourceVersion = list.resourceVersion;
    this.synced = true;
    this.informer.scopeSynced();
  }

  private watchOnce(): Promise<WatchOutcome> {
    if (this.stopped) return Promise.resolve({ kind: "stopped" });
    const watchdogMs = this.informer.options.watchdogMs ?? DEFAULT_WATCHDOG_MS;
    const started = Date.now();
    return new Promise((resolve) => {
      let settled = false;
      let events = 0;
      let handle: WatchHandle | undefined;
      let dog = setTimeout(() => finish({ kind: "silent" }), watchdogMs);
      const finish = (outcome: WatchOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(dog);
        this.watching = false;
        this.interrupt = undefined;
        handle?.abort();
        resolve(outcome);
      };
      this.interrupt = () => finish({ kind: "stopped" });
      const onEvent = (type: string, obj: KubeObject) => {
        if (settled) return;
        events++;
        clearTimeout(dog);
        dog = setTimeout(() => finish({ kind: "silent" }), watchdogMs);
        if (type === "ERROR") {
          const status = obj as { code?: number; message?: string };
          if (status.code === 410) finish({ kind: "gone" });
          else finish({ kind: "error", err: new Error(`watch error: ${status.message}`) });
          return;
        }
        const rv = obj.metadata?.resourceVersion;
        if (type === "ADDED" || type === "MODIFIED") {
          const ev = this.informer.store.upsert(withKind(this.informer.resource, obj));
          if (ev) this.informer.emit([ev]);
        } else if (type === "DELETED") {
          const ev = this.informer.store.remove(withKind(this.informer.resource, obj));
          if (ev) this.informer.emit([ev]);
        }
        if (rv) this.resourceVersion = rv;
      };
      const onDone = (err: unknown) => finish(watchEnd(err, events, Date.now() - started));
      this.lw.watch(this.resourceVersion, onEvent, onDone).then(
        (h) => {
          handle = h;
          if (settled) return h.abort();
          // After a silent watch, this one's answer shows the connection lives: list again.
          if (this.silentMs !== undefined) return finish({ kind: "checked" });
          this.watching = true;
          if (this.lastError === undefined) return;
          this.lastError = undefined;
          this.informer.options.onWatchChange?.();
        },
        (err: unknown) => finish({ kind: "error", err }),
      );
    });
  }

  /** Keeps `err` as the last error, at debug: the cache's report says it for all kinds. */
  private failed(err: unknown, msg: string, more = {}): void {
    this.lastError = err;
    this.log?.debug({ err, ...more }, msg);
    this.informer.options.onWatchChange?.();
  }

  /** `p`, or undefined once the scope is stopped: a list a partition leaves unanswered. */
  private interruptible<T>(p: Promise<T>): Promise<T | undefined> {
    return new Promise((resolve, reject) => {
      this.interrupt = () => resolve(undefined);
      p.then(resolve, reject);
    });
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.interrupt = () => {
        this.interrupt = undefined;
        done();
      };
    });
  }
}
