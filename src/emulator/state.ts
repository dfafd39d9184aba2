/**
 * The emulator's in-memory world: resources by id, the catalogs, the pending
 * subscriptions, a clock, deterministic ids and a seeded random source. Time-driven
 * changes (a subscription resolving, a task starting, a NAS becoming Running) happen
 * lazily in `advance()`, which the server calls before handling each request, so no
 * timer runs per resource and hundreds of resources cost nothing while idle.
 */

import { DEFAULT_BEHAVIOUR, type EmulatorBehaviour } from "./behaviour.js";
import { failOrder } from "./failed-orders.js";
import { FileSystemStore } from "./file-systems.js";
import { defaultCciInstances, defaultNasProducts, defaultTrainingProducts } from "./fixtures.js";
import { formatId, type IdFormat } from "./id-formats.js";
import { createPods } from "./pods.js";
import type {
  CciRecord,
  NasProductRecord,
  NasRecord,
  StorageObjectRecord,
  SubscriptionRecord,
  TaskRecord,
  TemplateRecord,
  TrainingProductRecord,
} from "./records.js";
import { Releases } from "./releases.js";
import { VolumeStore } from "./volumes.js";

export {
  DEFAULT_BEHAVIOUR,
  EMPTY_LIST_DATA,
  type EmptyListData,
  type EmulatorBehaviour,
  NAS_STATUS_CASES,
  type NasStatusCase,
  SUBSCRIPTION_RESULT_SHAPES,
  type SubscriptionResultShape,
} from "./behaviour.js";

/** A small, fast, seedable PRNG (mulberry32); returns floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The whole emulated service state. */
export class EmulatorState {
  readonly tasks = new Map<string, TaskRecord>();
  readonly nas = new Map<string, NasRecord>();
  readonly templates = new Map<string, TemplateRecord>();
  readonly subscriptions = new Map<string, SubscriptionRecord>();
  readonly cci = new Map<string, CciRecord>();
  readonly volumes = new VolumeStore({
    now: () => this.now(),
    transitionMs: () => this.behaviour.volumeTransitionMs,
    listVisibilityDelayMs: () => this.behaviour.listVisibilityDelayMs,
  });
  readonly fileSystems = new FileSystemStore();
  /** The records of the kinds with an emulator module of their own (src/emulator/kinds), by kind. */
  private readonly kindRecords = new Map<string, Map<string, StorageObjectRecord>>();
  trainingProducts: TrainingProductRecord[] = [];
  nasProducts: NasProductRecord[] = [];
  behaviour: EmulatorBehaviour;
  random: () => number;
  private readonly pending = new Set<string>();
  /** Task ids whose order succeeded, with the time they start (see taskStartDelayMs). */
  private readonly starting = new Map<string, number>();
  /** NAS, tasks and templates being released (nasReleaseDelayMs, taskReleaseDelayMs). */
  readonly releases = new Releases();
  /** NAS ids with an accepted scale, its target quota and when it shows (nasScaleDelayMs). */
  private readonly scaling = new Map<string, { quotaGB: number; at: number }>();
  private counters = new Map<string, number>();
  private nextExternalPort = 30000;

  /**
   * `idTag` goes into every id this state makes (`task-<tag>000001`, the tag ending in
   * `-`): the emulator's own tag, so two emulators' ids differ, and an account's name in
   * a multi-account emulator (tenants.ts), so ids stay unique across accounts, as a real
   * service's are (server.ts builds it).
   */
  constructor(
    behaviour: Partial<EmulatorBehaviour> = {},
    private readonly seed = 1,
    readonly now: () => number = Date.now,
    private readonly idTag = "",
  ) {
    this.behaviour = { ...DEFAULT_BEHAVIOUR, ...behaviour };
    this.random = seededRandom(seed);
    this.reset();
  }

  /** Back to the fixtures: no tasks, NAS, templates or subscriptions; ids restart. */
  reset(): void {
    for (const m of [
      this.tasks,
      this.nas,
      this.templates,
      this.subscriptions,
      this.cci,
      this.fileSystems,
    ]) {
      m.clear();
    }
    this.kindRecords.clear();
    this.volumes.clear();
    this.pending.clear();
    this.releases.clear();
    this.scaling.clear();
    this.counters = new Map();
    this.nextExternalPort = 30000;
    this.random = seededRandom(this.seed);
    this.trainingProducts = defaultTrainingProducts();
    this.nasProducts = defaultNasProducts();
    for (const c of defaultCciInstances()) this.cci.set(c.id, c);
  }

  /**
   * The records of `kind` (a kind module of src/emulator/kinds keeps its resources
   * here, by id): created empty on first use, emptied by {@link reset}.
   */
  records(kind: string): Map<string, StorageObjectRecord> {
    let records = this.kindRecords.get(kind);
    if (!records) {
      records = new Map();
      this.kindRecords.set(kind, records);
    }
    return records;
  }

  /** `prefix-<tag>000001`, `prefix-<tag>000002`, … per prefix, in `format` (id-formats.ts). */
  nextId(prefix: string, format: IdFormat = this.behaviour.idFormat): string {
    const n = (this.counters.get(prefix) ?? 0) + 1;
    this.counters.set(prefix, n);
    return formatId(format, prefix, this.idTag, n);
  }

  /** A subscription result key: unguessable-looking but deterministic under a seed. */
  nextSubscriptionKey(kind: string): string {
    const suffix = Math.floor(this.random() * 0xffffffff);
    const asNumber = this.behaviour.subscriptionKeyFormat === "number";
    const id = this.nextId(`sub-${kind}`, asNumber ? "numeric" : "default");
    return asNumber ? id : `${id}-${suffix.toString(16).padStart(8, "0")}`;
  }

  /** A fresh external port for a pod port mapping. */
  allocateExternalPort(): number {
    this.nextExternalPort += 1;
    return this.nextExternalPort;
  }

  /** Registers a subscription; it resolves in `advance()` once its time has come. */
  addSubscription(sub: SubscriptionRecord): void {
    this.subscriptions.set(sub.key, sub);
    if (!sub.resolved) this.pending.add(sub.key);
  }

  /** Number of subscriptions not yet resolved. */
  pendingCount(): number {
    return this.pending.size;
  }

  /**
   * Applies every change whose time has come: resolved subscriptions start their task
   * (RUNNING, pods; after `taskStartDelayMs`) or finish their NAS (Running). Idempotent;
   * cheap when nothing is due.
   */
  advance(): void {
    this.fileSystems.advance(this.now());
    this.volumes.advance();
    this.releases.advance(this.now());
    for (const [id, scale] of this.scaling) {
      const n = this.nas.get(id);
      if (this.now() < scale.at && n) continue;
      this.scaling.delete(id);
      if (n) {
        n.quotaGB = scale.quotaGB;
        n.updatedAt = scale.at;
      }
    }
    if (this.starting.size > 0) {
      const now = this.now();
      for (const [id, startAt] of this.starting) {
        if (now < startAt) continue;
        this.starting.delete(id);
        const task = this.tasks.get(id);
        if (task) this.startTask(task, now);
      }
    }
    if (this.pending.size === 0) return;
    const now = this.now();
    for (const key of this.pending) {
      const sub = this.subscriptions.get(key);
      if (!sub) {
        this.pending.delete(key);
        continue;
      }
      if (now >= sub.resolveAt) this.resolve(sub, now);
    }
  }

  /**
   * Deletes NAS `id`: at once, or after `nasReleaseDelayMs` with status `Releasing`
   * meanwhile (a second delete of a releasing NAS changes nothing).
   */
  deleteNas(id: string): void {
    const n = this.nas.get(id);
    if (!n || this.releases.has(id)) return;
    if (this.releases.start(this.nas, id, this.now(), this.behaviour.nasReleaseDelayMs)) {
      n.status = "Releasing";
      n.updatedAt = this.now();
    }
  }

  /**
   * Sets the quota of NAS `n` to `quotaGB`: at once, or `nasScaleDelayMs` later; false
   * (nothing changes) while an earlier scale of it has not shown yet.
   */
  scaleNas(n: NasRecord, quotaGB: number): boolean {
    if (this.scaling.has(n.id)) return false;
    const delay = this.behaviour.nasScaleDelayMs;
    if (delay > 0) {
      this.scaling.set(n.id, { quotaGB, at: this.now() + delay });
      return true;
    }
    n.quotaGB = quotaGB;
    n.updatedAt = this.now();
    return true;
  }

  /** Resolves `sub` now, applying its outcome to its resource. */
  resolve(sub: SubscriptionRecord, now = this.now()): void {
    sub.resolved = true;
    sub.resolvedAt = Math.min(now, sub.resolveAt);
    this.pending.delete(sub.key);
    if (sub.instanceId === undefined) return;
    if (sub.outcome === "Failed") {
      failOrder(this, sub.instanceId, this.behaviour.failedOrdersLeaveResources, now);
      return;
    }
    const task = sub.kind === "training" ? this.tasks.get(sub.instanceId) : undefined;
    const nas = sub.kind === "nas" ? this.nas.get(sub.instanceId) : undefined;
    const record = task ?? nas;
    const knownDelay = this.behaviour.detailVisibilityDelayMs;
    if (record && knownDelay > 0) record.knownAt = now + knownDelay;
    if (task) {
      const delay = this.behaviour.taskStartDelayMs;
      if (delay > 0) this.starting.set(task.id, now + delay);
      else this.startTask(task, now);
    } else {
      if (nas && nas.status === "Creating") {
        nas.status = "Running";
        nas.updatedAt = now;
      }
    }
  }

  /** Starts a task still `PENDING`: `RUNNING`, with its pods. */
  private startTask(task: TaskRecord, now: number): void {
    if (task.status !== "PENDING") return;
    task.status = "RUNNING";
    task.startedAt = now;
    task.updatedAt = now;
    task.pods = createPods(task, this);
    task.execInfos.push({ status: "RUNNING", info: "all pods are running", at: now });
  }

  /** Whether operations on its id know a record now (see detailVisibilityDelayMs). */
  isKnown(record: object): boolean {
    if (!("knownAt" in record) || typeof record.knownAt !== "number") return true;
    return this.now() >= record.knownAt;
  }

  /**
   * `knownAt` of a task or NAS just accepted: never until its order succeeds when the
   * service's detail lags its orders (detailVisibilityDelayMs), else no field.
   */
  unknownUntilResolved(): { knownAt?: number } {
    return this.behaviour.detailVisibilityDelayMs > 0 ? { knownAt: Number.POSITIVE_INFINITY } : {};
  }

  /** Whether a task, NAS or file system created at `visibleAt` shows in list operations now. */
  isListed(record: { visibleAt: number }): boolean {
    return this.now() >= record.visibleAt;
  }
}
