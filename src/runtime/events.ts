import type { Logger } from "pino";
import type { Counter } from "prom-client";
import { EventRetries, type EventRetryOptions } from "./event-retries.js";
import { TokenBucket, type TokenBucketOptions } from "./fair-lanes.js";
import type { KubeClient } from "./kube.js";
import type { ReconcileView } from "./kube-options.js";
import { isKubeUnreachable } from "./kube-unreachable.js";
import { type Clock, type KubeObject, type ResourceDescriptor, systemClock } from "./resource.js";

const EVENTS: ResourceDescriptor = {
  group: "events.k8s.io",
  version: "v1",
  plural: "events",
  kind: "Event",
  namespaced: true,
};

export type EventType = "Normal" | "Warning";

export interface EventRecorderOptions {
  /** `reportingController`, e.g. `aidc.io/aidc-operator`. */
  controller: string;
  /** `reportingInstance`: this process (the pod name). */
  instance: string;
  clock?: Clock;
  log?: Logger;
  /** Repeats within this period of the last one count into its series. Default 6 min. */
  aggregationWindowMs?: number;
  /** A series is written at most this often; counts in between are batched. Default 30 s. */
  seriesUpdateMs?: number;
  /** New Events per object (client-go's spam filter: 25, then one per 5 min); more drop. */
  spamBurst?: number;
  spamRefillMs?: number;
  /** How a write the API server did not answer is tried again (event-retries.ts). */
  retry?: EventRetryOptions;
  /** Counts the Events and series counts finally not written, by `reason` (metrics.ts). */
  dropped?: Counter<"reason">;
}

/** Objects whose spam budget is remembered before the full ones are forgotten. */
const SPAM_OBJECTS = 10_000;

/** Per-object budget of new Events; an object whose budget is full again is forgotten. */
class EventSpamFilter {
  private readonly budgets = new Map<string, TokenBucket>();

  constructor(
    private readonly rate: TokenBucketOptions,
    private readonly clock: Clock,
  ) {}

  allow(object: string): boolean {
    const budget = this.budgets.get(object) ?? new TokenBucket(this.rate, this.clock);
    this.budgets.set(object, budget);
    if (budget.refill() < 1) return false;
    budget.reserve();
    if (this.budgets.size > SPAM_OBJECTS) {
      for (const [key, b] of this.budgets) if (b.isFull()) this.budgets.delete(key);
    }
    return true;
  }
}

interface Series {
  namespace: string;
  name: string;
  count: number;
  lastObserved: Date;
  written: number;
  /** When the last count written (`written`) was observed. */
  writtenObserved: Date;
  timer?: NodeJS.Timeout;
  /** Resolves when the Event was created (so patches never precede the create). */
  created: Promise<boolean>;
}

const MAX_NOTE = 1024;

/** Series remembered at most (client-go's `maxLruCacheEntries`). */
export const MAX_SERIES = 4096;

/**
 * Records Events about objects as client-go's recorder does: never blocks nor throws
 * (writes run in the background), and a repeat of a recent Event counts into its
 * `series.count`. Its client has a rate limit of its own, so Events take no reconcile's.
 * A write the API server did not answer (kube-unreachable.ts) is tried again a bounded
 * number of times (event-retries.ts) through the recorder's own client, also once the
 * reconcile that recorded it has ended; one finally dropped is a debug line (the cache's
 * warnings and the failed reconciles' lines say the outage), one the API server refused
 * (403, 422, an admission webhook) a warning; both are counted (`dropped`).
 */
export class EventRecorder {
  private readonly series = new Map<string, Series>();
  private readonly pending = new Set<Promise<unknown>>();
  private readonly clock: Clock;
  private readonly window: number;
  private readonly seriesUpdateMs: number;
  private readonly spam: EventSpamFilter;
  /** Shared with every view ({@link forReconcile}), as the series are. */
  private readonly counter = { seq: 0 };
  private readonly retries: EventRetries;
  /** The recorder's own client, which a view's retries use (its reconcile may have ended). */
  private readonly root: KubeClient;

  constructor(
    private readonly kube: KubeClient,
    private readonly options: EventRecorderOptions,
  ) {
    this.clock = options.clock ?? systemClock;
    this.retries = new EventRetries(options.retry);
    this.root = kube;
    this.window = options.aggregationWindowMs ?? 6 * 60_000;
    this.seriesUpdateMs = options.seriesUpdateMs ?? 30_000;
    const spamRefillMs = options.spamRefillMs ?? 5 * 60_000;
    this.spam = new EventSpamFilter(
      { burst: options.spamBurst ?? 25, qps: 1000 / spamRefillMs },
      this.clock,
    );
  }

  /** A view for one reconcile (`ctx.events`): its writes go through `kube.forReconcile`. */
  forReconcile(reconcile: ReconcileView): EventRecorder {
    return Object.assign(Object.create(this) as EventRecorder, {
      kube: this.kube.forReconcile(reconcile),
    });
  }

  normal(obj: KubeObject, reason: string, note: string, action = reason): void {
    this.record(obj, "Normal", reason, note, action);
  }

  warning(obj: KubeObject, reason: string, note: string, action = reason): void {
    this.record(obj, "Warning", reason, note, action);
  }

  /** `obj` needs apiVersion, kind and metadata; `action` defaults to `reason`. */
  record(obj: KubeObject, type: EventType, reason: string, note: string, action = reason): void {
    const now = this.clock.now();
    const meta = obj.metadata ?? {};
    const trimmed = note.length > MAX_NOTE ? `${note.slice(0, MAX_NOTE - 3)}...` : note;
    const object = meta.uid ?? `${meta.namespace}/${meta.name}`;
    const id = [object, type, reason, action, trimmed].join("\u0000");
    this.expire(now);
    const known = this.series.get(id);
    if (known && now.getTime() - known.lastObserved.getTime() <= this.window) {
      known.count++;
      known.lastObserved = now;
      // Map order is the order of last observation: the oldest go first.
      this.series.delete(id);
      this.series.set(id, known);
      this.scheduleSeries(known);
      return;
    }
    if (!this.spam.allow(object)) {
      this.options.log?.debug({ reason, object: meta.name }, "event dropped by the spam filter");
      return;
    }
    const namespace = meta.namespace || "default";
    const name = `${meta.name}.${(now.getTime() * 1000 + (this.counter.seq++ % 1000)).toString(16)}`;
    const body = {
      apiVersion: "events.k8s.io/v1",
      kind: "Event",
      metadata: { name, namespace },
      eventTime: microTime(now),
      reportingController: this.options.controller,
      reportingInstance: this.options.instance,
      action,
      reason,
      note: trimmed,
      type,
      regarding: {
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        name: meta.name,
        namespace: meta.namespace,
        uid: meta.uid,
        resourceVersion: meta.resourceVersion,
      },
    };
    const created = this.track(
      this.write(name, (kube) => kube.create(EVENTS, body)).then(
        () => true,
        (err: unknown) => {
          this.writeFailed(err, { reason, object: meta.name }, "could not record event");
          return false;
        },
      ),
    );
    this.series.delete(id);
    const s = { namespace, name, count: 1, lastObserved: now, written: 1, writtenObserved: now };
    this.series.set(id, { ...s, created });
  }

  /**
   * `write` (through this view's client), tried again through the recorder's own while
   * the API server does not answer it; `key` names what it writes (see EventRetries.retry).
   */
  private async write(key: string, write: (kube: KubeClient) => Promise<unknown>): Promise<void> {
    try {
      await write(this.kube);
    } catch (err) {
      await this.retries.retry(key, err, () => write(this.root));
    }
  }

  /** Writes pending series counts now and waits for every outstanding write. */
  async flush(): Promise<void> {
    for (const s of this.series.values()) {
      if (s.timer) {
        clearTimeout(s.timer);
        s.timer = undefined;
        this.writeSeries(s);
      }
    }
    // Writes waiting to be tried again are tried now, the last time.
    await this.retries.flush(async () => {
      while (this.pending.size > 0) await Promise.all([...this.pending]);
    });
  }

  private scheduleSeries(s: Series): void {
    if (s.timer) return;
    // The first repeat is written at once (the user sees a series start); later ones batch.
    const delay = s.written === 1 ? 0 : this.seriesUpdateMs;
    s.timer = setTimeout(() => {
      s.timer = undefined;
      this.writeSeries(s);
    }, delay);
    s.timer.unref();
  }

  private writeSeries(s: Series): void {
    if (s.count === s.written) return;
    s.written = s.count;
    s.writtenObserved = s.lastObserved;
    this.track(
      s.created.then(async (ok) => {
        if (!ok) return;
        try {
          // A try sends the newest count written: one waiting for its next try takes it.
          await this.write(`${s.name}/series`, (kube) =>
            kube.patch(
              EVENTS,
              { namespace: s.namespace, name: s.name },
              { series: { count: s.written, lastObservedTime: microTime(s.writtenObserved) } },
            ),
          );
        } catch (err) {
          this.writeFailed(err, { event: s.name }, "could not update event series");
        }
      }),
    );
  }

  /** A write dropped, warned of as `what`; one the API server did not answer at debug. */
  private writeFailed(err: unknown, fields: object, what: string): void {
    const log = this.options.log;
    const unanswered = isKubeUnreachable(err);
    this.options.dropped?.inc({ reason: unanswered ? "unanswered" : "refused" });
    if (unanswered) log?.debug({ err, ...fields }, `${what}: the API server did not answer`);
    else log?.warn({ err, ...fields }, what);
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
    return p;
  }

  /** Forgets (after writing their counts) the series past the window and beyond MAX_SERIES. */
  private expire(now: Date): void {
    for (const [id, s] of this.series) {
      const expired = now.getTime() - s.lastObserved.getTime() > this.window;
      if (!expired && this.series.size < MAX_SERIES) return;
      if (s.timer) {
        clearTimeout(s.timer);
        s.timer = undefined;
        this.writeSeries(s);
      }
      this.series.delete(id);
    }
  }
}

/** metav1.MicroTime: RFC 3339 with microseconds. */
function microTime(d: Date): string {
  return `${d.toISOString().slice(0, 23)}000Z`;
}
