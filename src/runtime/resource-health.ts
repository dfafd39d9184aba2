/**
 * Object health as metrics, as Crossplane's `crossplane_managed_resource_*`: how many
 * objects of each kind and connection are Ready, Synced, and why not (the gauge
 * `aidc_managed_resources`), how long the longest-waiting object has been on its way
 * (`aidc_managed_resources_oldest_waiting_seconds`), and how long objects took from
 * create to their first Ready (`aidc_resource_first_ready_seconds`). Everything is read
 * from the informer cache when Prometheus scrapes, nothing per watch event: the
 * conditions `Ready`, `Synced` and kstatus' `Stalled`, read the same way for every
 * kind. What is domain knowledge comes from the wiring ({@link ResourceHealthSource}):
 * the kinds, the connection of an object and the reason table's verdict on a reason.
 */
import { Gauge, Histogram, type Registry } from "prom-client";
import type { KubeObject, ResourceDescriptor } from "./resource.js";

/** What the runtime must be told to export object health. */
export interface ResourceHealthSource {
  /** The kinds to count (each must be cached: a controller's primary or watched kind). */
  kinds: readonly ResourceDescriptor[];
  /**
   * The `connection` label of an object. Must take few values (the names of existing
   * connections and a few fixed words), whatever users write in their objects.
   */
  connectionOf(obj: KubeObject): string;
  /**
   * The reason table: `stateOf(reason)` is the state it gives `reason` (`Ok`, `UnderWay`,
   * `Terminal`, `Resting`), or undefined for a string that is not one of the operator's
   * reasons: such a reason is exported as `Other` (state `Unknown`), so the label takes
   * bounded values.
   */
  reasons: { stateOf(reason: string): string | undefined };
}

/** What the health export reads of the cache. */
export interface HealthCache {
  list(res: ResourceDescriptor): KubeObject[];
}

/** One row of `aidc_managed_resources`: its labels, and the count as the value. */
export interface HealthRow {
  labels: Record<"kind" | "connection" | "ready" | "synced" | "reason" | "state", string>;
  count: number;
}

/** What one pass over the cache found. */
export interface HealthSnapshot {
  rows: HealthRow[];
  /** Per kind: seconds the longest-waiting object has waited (0 when none waits). */
  oldestWaiting: Map<string, number>;
}

/** The `reason` of an object with no condition at all yet (not reconciled so far). */
export const NO_REASON = "None";
/** The `reason` exported for a reason that is not in the reason table. */
export const OTHER_REASON = "Other";

/** The health of one object version, minus its connection (memoised per object). */
interface ObjectHealth {
  /** kind, ready, synced, reason, state, joined: the key of a row but the connection. */
  key: string;
  ready: string;
  synced: string;
  reason: string;
  state: string;
  /** Epoch ms since which the object waits for Ready; undefined when it does not wait. */
  waitingSince: number | undefined;
  /** Epoch ms of creation and, when Ready, of Ready's last transition (else when seen). */
  created: number | undefined;
  readyAt: number | undefined;
}

interface ConditionLike {
  type?: unknown;
  status?: unknown;
  reason?: unknown;
  lastTransitionTime?: unknown;
}

function conditionsOf(obj: KubeObject): readonly ConditionLike[] {
  const status = obj.status as { conditions?: unknown } | undefined;
  return Array.isArray(status?.conditions) ? (status.conditions as ConditionLike[]) : [];
}

function statusOf(c: ConditionLike | undefined): string {
  return c && typeof c.status === "string" ? c.status : "Unknown";
}

function timeOf(value: unknown): number | undefined {
  if (typeof value !== "string") return undefined;
  const t = Date.parse(value);
  return Number.isNaN(t) ? undefined : t;
}

/**
 * Object health from the informer cache, computed when a scrape asks (at most once a
 * second). The per-object work is done once per object version (a WeakMap on the
 * frozen cached objects, which the cache replaces on every change); a connection is
 * asked at every pass, since a namespace's annotation can change it without a change
 * of the object.
 */
export class ResourceHealth {
  private readonly memo = new WeakMap<KubeObject, ObjectHealth>();
  /**
   * The uids of the last pass: true for an object on its way to its first Ready (timed
   * when a later pass finds it Ready), false for one not to time (timed already, or not
   * seen on its way).
   */
  private firstReady = new Map<string, boolean>();
  /** When Ready transitions count as new: the last pass, or when this process began to export. */
  private since: number | undefined;
  private last: { at: number; snapshot: HealthSnapshot } | undefined;

  /**
   * `metrics.observeFirstReady(kind, seconds)` gets each object's create-to-first-Ready
   * time, once, for the objects that turned Ready while this process exported
   * ({@link active}).
   */
  constructor(
    private readonly source: ResourceHealthSource,
    private readonly cache: HealthCache,
    private readonly metrics: { observeFirstReady(kind: string, seconds: number): void },
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Whether this process exports (it runs the controllers, as the leader: followers
   * export nothing, so series are not counted twice across replicas); the manager sets
   * it when its controllers start and when it stops.
   */
  get active(): boolean {
    return this.since !== undefined;
  }

  set active(on: boolean) {
    if (on === this.active) return;
    this.since = on ? this.now() : undefined;
    this.firstReady = new Map();
    this.last = undefined;
  }

  /** The health of the cache now; one pass per second at most (scrapes share it). */
  snapshot(): HealthSnapshot {
    const now = this.now();
    if (this.since === undefined) return { rows: [], oldestWaiting: new Map() };
    if (this.last && now - this.last.at < 1_000) return this.last.snapshot;
    const byKey = new Map<string, { health: ObjectHealth; counts: Map<string, number> }>();
    const oldestWaiting = new Map<string, number>();
    const firstReady = new Map<string, boolean>();
    for (const kind of this.source.kinds) {
      let oldest = 0;
      for (const obj of this.cache.list(kind)) {
        const health = this.healthOf(kind, obj);
        let entry = byKey.get(health.key);
        if (!entry) {
          entry = { health, counts: new Map() };
          byKey.set(health.key, entry);
        }
        const connection = this.source.connectionOf(obj);
        entry.counts.set(connection, (entry.counts.get(connection) ?? 0) + 1);
        if (health.waitingSince !== undefined) {
          oldest = Math.max(oldest, (now - health.waitingSince) / 1000);
        }
        const uid = obj.metadata?.uid;
        if (uid) firstReady.set(uid, this.timeFirstReady(kind, uid, health));
      }
      oldestWaiting.set(kind.kind, oldest);
    }
    const rows: HealthRow[] = [];
    for (const [key, { health, counts }] of byKey) {
      const kind = key.slice(0, key.indexOf("\0"));
      for (const [connection, count] of counts) {
        const { ready, synced, reason, state } = health;
        rows.push({ labels: { kind, connection, ready, synced, reason, state }, count });
      }
    }
    const snapshot = { rows, oldestWaiting };
    this.firstReady = firstReady;
    this.since = now;
    this.last = { at: now, snapshot };
    return snapshot;
  }

  /**
   * Times an object's first Ready, once: one seen on its way (not Ready, under way) by
   * an earlier pass, or one new since the last pass whose Ready condition turned True
   * since then (an object is created not Ready; its lastTransitionTime has whole
   * seconds). An object Ready or resting when first seen (at start) is not timed: when
   * it got Ready is unknown. Answers whether the object is still to be timed.
   */
  private timeFirstReady(kind: ResourceDescriptor, uid: string, health: ObjectHealth): boolean {
    const known = this.firstReady.get(uid);
    const { readyAt, created } = health;
    if (known === false) return false;
    if (readyAt === undefined) return known ?? health.waitingSince !== undefined;
    if (created !== undefined && (known || readyAt >= (this.since ?? 0) - 1_000)) {
      this.metrics.observeFirstReady(kind.kind, Math.max(0, (readyAt - created) / 1000));
    }
    return false;
  }

  private healthOf(kind: ResourceDescriptor, obj: KubeObject): ObjectHealth {
    const known = this.memo.get(obj);
    if (known) return known;
    const health = this.computeHealth(kind, obj);
    this.memo.set(obj, health);
    return health;
  }

  /**
   * Ready and Synced as written (`Unknown` when absent); the reason is Stalled's when
   * the object is stalled, else Synced's when Synced is not True, else Ready's. An
   * object with no condition yet has reason `None` and counts as under way.
   */
  private computeHealth(kind: ResourceDescriptor, obj: KubeObject): ObjectHealth {
    const conditions = conditionsOf(obj);
    const find = (type: string) => conditions.find((c) => c.type === type);
    const readyCondition = find("Ready");
    const syncedCondition = find("Synced");
    const stalled = find("Stalled");
    const ready = statusOf(readyCondition);
    const synced = statusOf(syncedCondition);
    const chosen =
      stalled?.status === "True"
        ? stalled
        : syncedCondition && synced !== "True"
          ? syncedCondition
          : readyCondition;
    const written = typeof chosen?.reason === "string" ? chosen.reason : "";
    let reason = NO_REASON;
    let state = "UnderWay";
    if (written) {
      const known = this.source.reasons.stateOf(written);
      reason = known ? written : OTHER_REASON;
      state = known ?? "Unknown";
    }
    const waits = ready !== "True" && state === "UnderWay";
    const readySince = timeOf(readyCondition?.lastTransitionTime);
    const created = timeOf(obj.metadata?.creationTimestamp);
    return {
      key: [kind.kind, ready, synced, reason, state].join("\0"),
      ready,
      synced,
      reason,
      state,
      waitingSince: waits ? (readySince ?? created) : undefined,
      created,
      readyAt: ready === "True" ? (readySince ?? this.now()) : undefined,
    };
  }
}

/** Create to first Ready: seconds (a volume) to hours (a job waiting for capacity). */
const FIRST_READY_BUCKETS = [1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 21600];

/**
 * Registers the object health metrics in `registers`: the gauges read `snapshot` at
 * each scrape (undefined: no rows), and so does the returned first-Ready histogram, so
 * that the first Readies a pass finds are in the same scrape.
 */
export function registerHealthMetrics(
  registers: Registry[],
  snapshot: () => HealthSnapshot | undefined,
): Histogram<"kind"> {
  new Gauge({
    name: "aidc_managed_resources",
    help: "Objects of the operator's kinds in the cache, by kind, connection (account: a ServiceConnection's name, _default, or _missing for one that does not exist), the status of their Ready and Synced conditions (True, False, Unknown when absent), reason (Stalled's when stalled, else Synced's when Synced is not True, else Ready's; None before the first condition, Other for a reason not in the reason table) and state (the reason table's verdict: Ok, UnderWay, Terminal = stalled until a person acts, Resting, Unknown); exported by the leader only",
    labelNames: ["kind", "connection", "ready", "synced", "reason", "state"],
    registers,
    collect() {
      this.reset();
      for (const row of snapshot()?.rows ?? []) this.set({ ...row.labels }, row.count);
    },
  });
  new Gauge({
    name: "aidc_managed_resources_oldest_waiting_seconds",
    help: "Seconds the longest-waiting object of a kind has been not Ready while under way (state UnderWay: created, updated or retried, not stalled, not resting), counted from its Ready condition's last transition (else its creation); 0 when none waits; exported by the leader only",
    labelNames: ["kind"],
    registers,
    collect() {
      this.reset();
      for (const [kind, s] of snapshot()?.oldestWaiting ?? []) this.set({ kind }, s);
    },
  });
  return new Histogram({
    name: "aidc_resource_first_ready_seconds",
    help: "Seconds from an object's creation to its first Ready=True, by kind; observed once per object, for objects that turned Ready while this process was the leader and that it saw on their way (not Ready when it became the leader, or created since)",
    labelNames: ["kind"],
    buckets: FIRST_READY_BUCKETS,
    registers,
    collect() {
      snapshot();
    },
  });
}
