/**
 * Object health as metrics, as Crossplane's `crossplane_managed_resource_*`: how many
 * objects of each kind and connection are Ready, Synced, and why not (the gauge
 * `aidc_managed_resources`), how long the longest-waiting object has been on its way
 * (`aidc_managed_resources_oldest_waiting_seconds`), and how long objects took from
 * create to their first Ready (`aidc_resource_first_ready_seconds`). Everything is read
 * from the informer cache: the conditions `Ready`, `Synced` and kstatus' `Stalled`, read
 * the same way for every kind. What is domain knowledge comes from the wiring
 * ({@link ResourceHealthSource}): the kinds, the connection of an object and the
 * reason table's verdict on a reason.
 */
import type { Informer } from "./informer.js";
import type { KubeObject, ResourceDescriptor } from "./resource.js";
import type { StoreEvent } from "./store.js";

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
  informerFor(res: ResourceDescriptor): Pick<Informer, "on">;
}

/** The labels of one row of `aidc_managed_resources` (the count is the value). */
export interface HealthLabels {
  kind: string;
  connection: string;
  ready: string;
  synced: string;
  reason: string;
  state: string;
}

/** One row of `aidc_managed_resources`. */
export interface HealthRow {
  labels: HealthLabels;
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
 * Object health from the informer cache. The per-object work is done once per object
 * version (a WeakMap on the frozen cached objects, which the cache replaces on every
 * change), so a scrape walks the cache and counts; a connection is asked at every
 * scrape, since a namespace's annotation can change it without a change of the object.
 */
export class ResourceHealth {
  private readonly memo = new WeakMap<KubeObject, ObjectHealth>();
  /** uids of objects first seen on their way to Ready: their first Ready is timed. */
  private readonly pending = new Set<string>();
  private last: { at: number; snapshot: HealthSnapshot } | undefined;

  /**
   * Whether this process exports (it runs the controllers, as the leader: followers
   * export nothing, so series are not counted twice across replicas); the manager sets
   * it when its controllers start and when it stops.
   */
  active = false;

  /**
   * `metrics.observeFirstReady(kind, seconds)` gets each object's create-to-first-Ready
   * time, once, for the objects this process saw before they were Ready, while
   * {@link active}.
   */
  constructor(
    private readonly source: ResourceHealthSource,
    private readonly cache: HealthCache,
    private readonly metrics: { observeFirstReady(kind: string, seconds: number): void },
    private readonly now: () => number = Date.now,
  ) {
    for (const kind of source.kinds) {
      cache.informerFor(kind).on((ev) => this.onEvent(kind, ev));
    }
  }

  /** The health of the cache now; one pass per second at most (scrapes share it). */
  snapshot(): HealthSnapshot {
    const now = this.now();
    if (!this.active) return { rows: [], oldestWaiting: new Map() };
    if (this.last && now - this.last.at < 1_000) return this.last.snapshot;
    const byKey = new Map<string, { health: ObjectHealth; counts: Map<string, number> }>();
    const oldestWaiting = new Map<string, number>();
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
    this.last = { at: now, snapshot };
    return snapshot;
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
    const since =
      timeOf(readyCondition?.lastTransitionTime) ?? timeOf(obj.metadata?.creationTimestamp);
    return {
      key: [kind.kind, ready, synced, reason, state].join("\0"),
      ready,
      synced,
      reason,
      state,
      waitingSince: waits ? since : undefined,
    };
  }

  /**
   * Times first Readies: an object first seen not Ready and on its way (a create) is
   * remembered; when it turns Ready, the time from its creationTimestamp to its Ready
   * condition's lastTransitionTime (when the operator wrote it; now when absent) is
   * observed once. An object Ready when first seen (at start) is not timed: when it got
   * Ready is unknown.
   */
  private onEvent(kind: ResourceDescriptor, ev: StoreEvent): void {
    const uid = ev.object.metadata?.uid;
    if (!uid) return;
    if (ev.type === "delete") {
      this.pending.delete(uid);
      return;
    }
    const health = this.healthOf(kind, ev.object);
    if (ev.type === "add") {
      if (health.waitingSince !== undefined) this.pending.add(uid);
      return;
    }
    if (health.ready !== "True" || !this.pending.delete(uid)) return;
    const created = timeOf(ev.object.metadata?.creationTimestamp);
    if (created === undefined || !this.active) return;
    const readyAt =
      timeOf(conditionsOf(ev.object).find((c) => c.type === "Ready")?.lastTransitionTime) ??
      this.now();
    this.metrics.observeFirstReady(kind.kind, Math.max(0, (readyAt - created) / 1000));
  }
}
