/**
 * Watches one kind in one namespace and records, per object, when its Ready
 * condition was first seen True (local clock, millisecond precision; the API's
 * timestamps have whole seconds) and how many times its resourceVersion changed
 * (each change is one effective write by someone).
 */
import * as k8s from "@kubernetes/client-node";
import type { KubeClient } from "../../src/runtime/kube.js";
import {
  type KubeObject,
  type ResourceDescriptor,
  resourcePath,
} from "../../src/runtime/resource.js";

interface Tracked {
  appliedAt?: number;
  readyAt?: number;
  /** First time each {@link MILESTONES} entry was seen true (local clock). */
  milestones?: Partial<Record<Milestone, number>>;
  resourceVersion?: string;
  changes: number;
  /** JSON of each top-level field of status and of the metadata a controller writes. */
  fields?: Record<string, string>;
  /** The last version seen has Reconciling=True (the operator is still at work on it). */
  reconciling?: boolean;
}

/** The fields whose changes are attributed: status.* and the controller's metadata. */
function fieldsOf(obj: KubeObject): Record<string, string> {
  const out: Record<string, string> = {};
  const status = (obj.status ?? {}) as Record<string, unknown>;
  for (const [k, v] of Object.entries(status)) out[`status.${k}`] = JSON.stringify(v);
  out["metadata.annotations"] = JSON.stringify(obj.metadata?.annotations ?? {});
  out["metadata.finalizers"] = JSON.stringify(obj.metadata?.finalizers ?? []);
  out["metadata.labels"] = JSON.stringify(obj.metadata?.labels ?? {});
  out.spec = JSON.stringify(obj.spec ?? {});
  return out;
}

/**
 * The steps of a managed object's create as the watch shows them: `seen` (the first
 * event: the create reached the API server and its watch), `claimed` (the operator's
 * first write: the finalizer, with the create's pending marker), `bound` (the remote
 * resource's id recorded), then Ready.
 */
const MILESTONES = {
  seen: () => true,
  claimed: (obj: KubeObject) =>
    (obj.metadata?.finalizers?.length ?? 0) > 0 ||
    obj.metadata?.annotations?.["aidc.io/create-pending"] !== undefined,
  bound: (obj: KubeObject) => obj.metadata?.annotations?.["aidc.io/external-id"] !== undefined,
} as const;
type Milestone = keyof typeof MILESTONES;

/**
 * Per object, ms from each step to the next: `created` (the create sent → seen),
 * `claimed` (→ the operator's first write), `bound` (→ the id recorded), `ready`
 * (→ Ready). A step not seen on its own (a version the watch skipped) counts as reached
 * with the next one.
 */
export interface StageTimes {
  created: number;
  claimed: number;
  bound: number;
  ready: number;
}

/** Whether `obj` has condition Ready=True. */
export function isReady(obj: KubeObject): boolean {
  const conditions = (obj.status as { conditions?: { type: string; status: string }[] } | undefined)
    ?.conditions;
  return conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
}

/** Whether `obj` has condition Reconciling=True (kstatus: work under way). */
export function isReconciling(obj: KubeObject): boolean {
  const conditions = (obj.status as { conditions?: { type: string; status: string }[] } | undefined)
    ?.conditions;
  return conditions?.some((c) => c.type === "Reconciling" && c.status === "True") ?? false;
}

/** Ready times and write counts of the objects of one kind in one namespace. */
export class ReadyTracker {
  private readonly objects = new Map<string, Tracked>();
  private readonly fieldChanges: Record<string, number> = {};
  private abort?: AbortController;
  private stopped = false;

  constructor(
    private readonly kc: k8s.KubeConfig,
    private readonly kube: KubeClient,
    private readonly res: ResourceDescriptor,
    private readonly namespace: string,
  ) {}

  /** Lists, then watches until `stop()`; a closed watch is restarted by a new list. */
  async start(): Promise<void> {
    const list = await this.kube.list(this.res, this.namespace);
    for (const obj of list.items) this.observe(obj);
    this.abort = await new k8s.Watch(this.kc).watch(
      resourcePath(this.res, this.namespace),
      { resourceVersion: list.resourceVersion, allowWatchBookmarks: true },
      (type: string, obj: KubeObject) => {
        if (type === "ADDED" || type === "MODIFIED") this.observe(obj);
      },
      () => {
        if (this.stopped) return;
        setTimeout(() => void this.start().catch(() => this.restartLater()), 500);
      },
    );
  }

  private restartLater(): void {
    if (!this.stopped) setTimeout(() => void this.start().catch(() => this.restartLater()), 1000);
  }

  /** Records the moment the bench sent the create of `name`. */
  markApplied(name: string, at = Date.now()): void {
    this.entry(name).appliedAt = at;
  }

  private entry(name: string): Tracked {
    let t = this.objects.get(name);
    if (!t) {
      t = { changes: 0 };
      this.objects.set(name, t);
    }
    return t;
  }

  private observe(obj: KubeObject): void {
    const name = obj.metadata?.name ?? "";
    const t = this.entry(name);
    const rv = obj.metadata?.resourceVersion;
    const fields = fieldsOf(obj);
    if (t.resourceVersion !== undefined && rv !== t.resourceVersion) {
      t.changes += 1;
      for (const k of new Set([...Object.keys(fields), ...Object.keys(t.fields ?? {})])) {
        if (fields[k] !== t.fields?.[k]) this.fieldChanges[k] = (this.fieldChanges[k] ?? 0) + 1;
      }
    }
    t.resourceVersion = rv;
    t.fields = fields;
    const now = Date.now();
    t.milestones ??= {};
    for (const [m, reached] of Object.entries(MILESTONES) as [
      Milestone,
      (o: KubeObject) => boolean,
    ][]) {
      if (t.milestones[m] === undefined && reached(obj)) t.milestones[m] = now;
    }
    if (t.readyAt === undefined && isReady(obj)) t.readyAt = now;
    t.reconciling = isReconciling(obj);
  }

  /**
   * Names among `names` whose last version seen has Reconciling=True: Ready, but the
   * operator still has work on them (e.g. a TrainingJob's storages and pods, read in a
   * follow-up poll after its first look).
   */
  reconciling(names: readonly string[]): string[] {
    return names.filter((n) => this.objects.get(n)?.reconciling === true);
  }

  /** Names not yet seen Ready among `names`. */
  notReady(names: readonly string[]): string[] {
    return names.filter((n) => this.objects.get(n)?.readyAt === undefined);
  }

  /** apply→Ready latencies in ms of the objects seen Ready (of `names` only, if given). */
  latencies(names?: readonly string[]): number[] {
    const out: number[] = [];
    const tracked = names ? names.map((n) => this.objects.get(n)) : this.objects.values();
    for (const t of tracked) {
      if (t?.appliedAt !== undefined && t.readyAt !== undefined) out.push(t.readyAt - t.appliedAt);
    }
    return out;
  }

  /** The {@link StageTimes} of the objects among `names` seen applied and Ready. */
  stages(names: readonly string[]): StageTimes[] {
    const out: StageTimes[] = [];
    for (const name of names) {
      const t = this.objects.get(name);
      if (t?.appliedAt === undefined || t.readyAt === undefined) continue;
      const ready = t.readyAt;
      const bound = Math.min(t.milestones?.bound ?? ready, ready);
      const claimed = Math.min(t.milestones?.claimed ?? bound, bound);
      const seen = Math.min(t.milestones?.seen ?? claimed, claimed);
      out.push({
        created: seen - t.appliedAt,
        claimed: claimed - seen,
        bound: bound - claimed,
        ready: ready - bound,
      });
    }
    return out;
  }

  /** Latest Ready time seen (ms since the epoch). */
  lastReadyAt(): number {
    let last = 0;
    for (const t of this.objects.values()) last = Math.max(last, t.readyAt ?? 0);
    return last;
  }

  /** Sum of resourceVersion changes seen so far (writes that changed an object). */
  changes(): number {
    let n = 0;
    for (const t of this.objects.values()) n += t.changes;
    return n;
  }

  /** How often each field changed so far (status.<field>, metadata.annotations, ...). */
  changedFields(): Record<string, number> {
    return { ...this.fieldChanges };
  }

  /** Ends the watch. */
  stop(): void {
    this.stopped = true;
    this.abort?.abort();
  }
}

/** The p-th percentile (0..100) of `values` by nearest rank; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

/** p50, p95 and max of create-to-Ready latencies, ms. */
export interface LatencyFigures {
  p50: number;
  p95: number;
  max: number;
}

/** The {@link LatencyFigures} of `latencies`. */
export function latencyFigures(latencies: readonly number[]): LatencyFigures {
  return {
    p50: Math.round(percentile(latencies, 50)),
    p95: Math.round(percentile(latencies, 95)),
    max: Math.round(Math.max(...latencies)),
  };
}

/** Waits until `tracker` saw every one of `names` Ready; throws after `timeoutMs`. */
export async function waitAllReady(
  tracker: ReadyTracker,
  names: readonly string[],
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (tracker.notReady(names).length > 0) {
    if (Date.now() > deadline) {
      throw new Error(`not Ready in time: ${tracker.notReady(names).slice(0, 5).join(", ")}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
