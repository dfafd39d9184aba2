/**
 * Deletes under chaos: a seeded share of the run's objects is deleted while the kills
 * go on, half of them (by a seeded draw) with `deletionPolicy: Delete`, the others with
 * `Orphan`; an observe-only NasVolume keeps its NAS whatever its policy says. A census
 * of the emulator's records (sampled while the run goes on) maps every remote id to the
 * name it carried, so the checks can say which object's resource each delete call named.
 *
 * The invariants (checkDeletes): every deleted object is gone from the API (its
 * finalizer released); under Delete, no remote resource of its name is left and at
 * most one ever existed; under Orphan (or observe-only), at most one ever existed and
 * every one is still there; and no delete call of the service named a resource whose
 * object was not deleted under Delete. A deleted object a webhook left waiting at
 * WriteNotKept (admission.ts) may still be in the API, its resource with it.
 */
import type { RunningEmulator } from "../../src/emulator/server.js";
import { seededRandom } from "../../src/emulator/state.js";
import type { KubeClient } from "../../src/runtime/kube.js";
import type { KubeObject, ResourceDescriptor } from "../../src/runtime/resource.js";
import { accountStates, remoteTemplates } from "./checks.js";

/** One object of the run, as the scenario creates it. */
export interface ChaosObject {
  res: ResourceDescriptor;
  obj: KubeObject;
  /** The name its remote resource carries, when not the object's own (an observed NAS). */
  remoteName?: string;
  /** A kind that never deletes its remote resource (no deletionPolicy: a CciInstance). */
  keepsRemote?: boolean;
}

/** An object the run deletes, and what its deletion must do to its remote resource. */
export interface PlannedDelete {
  kind: string;
  name: string;
  /** The remote name it carries (the observed NAS keep theirs). */
  remoteName: string;
  /** True when its resource must be deleted: deletionPolicy Delete and not observe-only. */
  deletesRemote: boolean;
}

/** What the delete checks found. */
export interface DeleteFindings {
  /** The objects deleted, as planned. */
  planned: PlannedDelete[];
  requested: number;
  withDelete: number;
  kept: number;
  /** Deleted objects still in the API at the end. */
  notReleased: string[];
  /** Remote resources left of objects deleted under Delete. */
  leaked: string[];
  /** Delete calls that named a resource whose object was not deleted under Delete. */
  wrongDeletes: string[];
  /** Resources of kept (Orphan, observe-only) objects that are gone. */
  lostKept: string[];
  violations: string[];
}

/**
 * Chooses `share` of `objects` (seeded by `seed`, a stream of its own so that the kill
 * schedule of a seed stays the same) and sets each one's deletionPolicy; answers the
 * plan by object index.
 */
export function planDeletes(
  objects: ChaosObject[],
  share: number,
  seed: number,
): Map<number, PlannedDelete> {
  const random = seededRandom(seed * 7919 + 17);
  const plan = new Map<number, PlannedDelete>();
  objects.forEach(({ res, obj, remoteName, keepsRemote }, i) => {
    const draw = random();
    const policy = random() < 0.5 ? "Delete" : "Orphan";
    if (draw >= share) return;
    const spec = obj.spec as Record<string, unknown>;
    if (!keepsRemote) spec.deletionPolicy = policy;
    const observeOnly = Array.isArray(spec.managementPolicies);
    plan.set(i, {
      kind: res.kind,
      name: obj.metadata?.name ?? "",
      remoteName: remoteName ?? obj.metadata?.name ?? "",
      deletesRemote: policy === "Delete" && !observeOnly && !keepsRemote,
    });
  });
  return plan;
}

/** Deletes the planned objects among `objects[from, to)` (a missing one is fine). */
export async function deletePlanned(
  kube: KubeClient,
  objects: ChaosObject[],
  plan: Map<number, PlannedDelete>,
  from: number,
  to: number,
): Promise<void> {
  for (let i = from; i < Math.min(to, objects.length); i++) {
    const o = objects[i];
    if (!o || !plan.has(i)) continue;
    await kube
      .delete(o.res, {
        namespace: o.obj.metadata?.namespace ?? "",
        name: o.obj.metadata?.name ?? "",
      })
      .catch((err: { code?: number }) => {
        if (err.code !== 404) throw err;
      });
  }
}

/** Every remote id the emulator has shown while the census ran, with its name. */
export class RemoteCensus {
  readonly names = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly emulator: RunningEmulator) {}

  /** The ids of the records every account shows now, with their names. */
  present(): Map<string, string> {
    const now = new Map<string, string>();
    for (const state of accountStates(this.emulator)) {
      for (const r of [
        ...state.nas.values(),
        ...state.tasks.values(),
        ...state.fileSystems.byId.values(),
        ...state.volumes.records.values(),
        ...remoteTemplates(state),
        ...[...state.cci.values()].map((c) => ({ id: c.id, name: String(c.fields.name ?? "") })),
      ]) {
        now.set(r.id, r.name);
      }
    }
    return now;
  }

  /** Adds what is shown now to the census. */
  sample(): Map<string, string> {
    const now = this.present();
    for (const [id, name] of now) this.names.set(id, name);
    return now;
  }

  start(intervalMs = 50): this {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.sample();
  }
}

/** The service's delete operations of the run's kinds. */
export const DELETE_ENDPOINTS = new Set([
  "deleteNas",
  "deleteTrainingTask",
  "deleteFileSystem",
  "deleteFileSystemMount",
  "deleteVolume",
  "deleteTemplate",
]);

/**
 * Checks the `planned` deletes once the run has settled (census stopped); `resources`
 * are the kinds of the run, `since` the request log's first entry of the run.
 */
export async function checkDeletes(args: {
  kube: KubeClient;
  emulator: RunningEmulator;
  namespace: string;
  resources: ResourceDescriptor[];
  planned: PlannedDelete[];
  census: RemoteCensus;
  since: number;
  /** `Kind/name` of the deleted objects a webhook left waiting at WriteNotKept. */
  waiting?: ReadonlySet<string>;
}): Promise<DeleteFindings> {
  const { kube, planned, census } = args;
  const violations: string[] = [];
  const present = census.sample();
  const everByName = new Map<string, string[]>();
  for (const [id, name] of census.names)
    everByName.set(name, [...(everByName.get(name) ?? []), id]);

  const notReleased: string[] = [];
  const leaked: string[] = [];
  const lostKept: string[] = [];
  for (const d of planned) {
    const res = args.resources.find((r) => r.kind === d.kind);
    const left =
      res &&
      (await kube.get(res, { namespace: args.namespace, name: d.name }).catch(() => undefined));
    const waits = left && args.waiting?.has(`${d.kind}/${d.name}`);
    if (left && !waits) notReleased.push(`${d.kind}/${d.name}`);
    const ever = everByName.get(d.remoteName) ?? [];
    if (ever.length > 1) {
      violations.push(
        `${d.kind}/${d.name}: ${ever.length} remote resources existed (${ever.join(", ")})`,
      );
    }
    for (const id of ever) {
      if (d.deletesRemote && !waits && present.has(id)) leaked.push(`${d.kind}/${d.name}: ${id}`);
      if (!d.deletesRemote && !present.has(id)) lostKept.push(`${d.kind}/${d.name}: ${id}`);
    }
  }
  for (const n of notReleased) violations.push(`${n} was deleted but is still in the API`);
  for (const l of leaked)
    violations.push(`deleted under deletionPolicy Delete, resource left: ${l}`);
  for (const l of lostKept) violations.push(`deleted without Delete, resource gone: ${l}`);

  // Every delete call must name a resource of an object deleted under Delete.
  const mayDelete = new Set(planned.filter((d) => d.deletesRemote).map((d) => d.remoteName));
  const wrongDeletes: string[] = [];
  const calls = args.emulator.requestLog
    .read({ since: args.since, method: "DELETE" })
    .filter((e) => e.endpoint !== undefined && DELETE_ENDPOINTS.has(e.endpoint));
  for (const e of calls) {
    const id = e.path.split("/").find((segment) => census.names.has(segment));
    const name = id === undefined ? undefined : census.names.get(id);
    if (name === undefined || !mayDelete.has(name)) {
      wrongDeletes.push(`${e.endpoint} ${e.path} (${name ?? "an id never shown"})`);
    }
  }
  for (const w of wrongDeletes)
    violations.push(`a delete call named a resource not to delete: ${w}`);

  return {
    planned,
    requested: planned.length,
    withDelete: planned.filter((d) => d.deletesRemote).length,
    kept: planned.filter((d) => !d.deletesRemote).length,
    notReleased,
    leaked,
    wrongDeletes,
    lostKept,
    violations,
  };
}
