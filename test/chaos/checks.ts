/**
 * The invariants the chaos run ends with: exactly one remote resource per object (and
 * exactly one mount per FileSystem, each BlockVolume's volume attached to its instance),
 * every object Ready, no object stopped as CreateOutcomeUnknown (each one listed),
 * except the objects a webhook holds (admission.ts): none, and not Ready, and those it
 * left waiting at WriteNotKept: at most one, and not Ready; and the API key in no log
 * line and no Event. Objects the run deleted are left to deletes.ts, except that their
 * remote resources are no strays.
 */
import { readFile } from "node:fs/promises";
import type { RunningEmulator } from "../../src/emulator/server.js";
import type { EmulatorState } from "../../src/emulator/state.js";
import type { KubeClient } from "../../src/runtime/kube.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { isReady } from "../bench/ready-tracker.js";
import {
  BV,
  bvInstance,
  bvName,
  FS,
  fsName,
  JOB,
  jobName,
  NAS,
  nasName,
  TPL,
  templateName,
} from "../bench/workload.js";

/** What the checks found. */
export interface ChaosFindings {
  /** Remote resources per object name: every value must be 1. */
  remoteCounts: {
    nas: Record<string, number>;
    tasks: Record<string, number>;
    fileSystems: Record<string, number>;
    /** Mounts over the remote file systems of each FileSystem's name (each must be 1). */
    mounts: Record<string, number>;
    volumes: Record<string, number>;
    templates: Record<string, number>;
    /** Remote volumes of each BlockVolume's name attached to its instance (each must be 1). */
    attached: Record<string, number>;
  };
  /** Remote resources carrying the run's prefix but no object's name. */
  strayRemote: string[];
  /** Resources of an object in the account it does not use. */
  wrongAccount: string[];
  ready: number;
  total: number;
  notReady: string[];
  createOutcomeUnknown: { name: string; message: string }[];
  /**
   * `Kind/name` of each object whose lost create the operator sent again (Warning
   * CreateRepeated); the scenario adds what the service received of its creates.
   */
  createsRepeated: string[];
  /** Lines of the operator's log that were searched for the key. */
  logLines: number;
  apiKeyInLogLines: number;
  apiKeyInEvents: number;
  apiKeyInObjects: number;
  eventsChecked: number;
  violations: string[];
}

/** The object an Event is about. */
interface ObjectRef {
  kind?: string;
  name?: string;
}

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

/** Runs every check; `violations` lists each broken invariant in words. */
export async function checkInvariants(args: {
  kube: KubeClient;
  emulator: RunningEmulator;
  namespace: string;
  prefix: string;
  nas: number;
  jobs: number;
  /** FileSystems of the run (default 0). */
  fileSystems?: number;
  /** BlockVolumes of the run (default 0). */
  blockVolumes?: number;
  /** TrainingTemplates of the run (default 0). */
  templates?: number;
  apiKey: string;
  logFile: string;
  /** `Kind/name` of the objects the run deleted: deletes.ts checks them instead. */
  deleted?: ReadonlySet<string>;
  /** `Kind/name` of the objects a webhook holds: no remote resource (admission.ts checks the rest). */
  held?: ReadonlySet<string>;
  /** `Kind/name` of the objects a webhook left waiting at WriteNotKept: at most one remote resource. */
  waiting?: ReadonlySet<string>;
  /** The second account and the objects (`Kind/name`) that live in it (accounts.ts). */
  second?: { state: EmulatorState; objects: ReadonlySet<string> };
}): Promise<ChaosFindings> {
  const { kube, emulator, namespace, prefix, apiKey } = args;
  const violations: string[] = [];
  const deleted = args.deleted ?? new Set<string>();
  const held = args.held ?? new Set<string>();
  const waiting = args.waiting ?? new Set<string>();
  const expected = (kind: string, name: string) => (held.has(`${kind}/${name}`) ? 0 : 1);
  // A waiting object may have its resource (its id not kept yet) or not (no marker kept).
  const wrong = (kind: string, name: string, n: number) =>
    waiting.has(`${kind}/${name}`) ? n > 1 : n !== expected(kind, name);
  const wanted = (kind: string, name: string) =>
    waiting.has(`${kind}/${name}`) ? "at most 1" : `exactly ${expected(kind, name)}`;
  // Every name is known (so its resources are no strays); only live ones are checked.
  const names = (kind: string, n: number, name: (p: string, i: number) => string) => {
    const all = Array.from({ length: n }, (_, i) => name(prefix, i));
    return { kind, all, live: all.filter((x) => !deleted.has(`${kind}/${x}`)) };
  };
  const nasNames = names(NAS.kind, args.nas, nasName);
  const jobNames = names(JOB.kind, args.jobs, jobName);
  const fsNames = names(FS.kind, args.fileSystems ?? 0, fsName);
  const bvNames = names(BV.kind, args.blockVolumes ?? 0, bvName);
  const tplNames = names(TPL.kind, args.templates ?? 0, templateName);

  // Each object's resources are counted in its own account; one in the other is a violation.
  const { second } = args;
  const accounts = [emulator.state, ...(second ? [second.state] : [])];
  const wrongAccount: string[] = [];
  const count = (
    { kind, all, live }: { kind: string; all: string[]; live: string[] },
    records: (state: EmulatorState) => Iterable<{ name: string; id: string }>,
  ) => {
    const known = new Set(all);
    const counts: Record<string, number> = Object.fromEntries(live.map((n) => [n, 0]));
    const stray: string[] = [];
    for (const state of accounts) {
      const inSecond = state === second?.state;
      for (const r of records(state)) {
        const ofSecond = second?.objects.has(`${kind}/${r.name}`) ?? false;
        if (known.has(r.name) && ofSecond !== inSecond) {
          wrongAccount.push(
            `${kind}/${r.name}: ${r.id} in the ${inSecond ? "second" : "default"} account`,
          );
        } else if (r.name in counts) counts[r.name] = (counts[r.name] ?? 0) + 1;
        else if (!known.has(r.name) && r.name.startsWith(`${prefix}-`)) {
          stray.push(`${r.name} (${r.id})`);
        }
      }
    }
    for (const [name, n] of Object.entries(counts)) {
      if (wrong(kind, name, n)) {
        violations.push(`${name}: ${n} remote resources (expected ${wanted(kind, name)})`);
      }
    }
    return { counts, stray };
  };
  const nasCount = count(nasNames, (s) => s.nas.values());
  const taskCount = count(jobNames, (s) => s.tasks.values());
  const remoteFileSystems = [...emulator.state.fileSystems.byId.values()];
  const fsCount = count(fsNames, (s) => s.fileSystems.byId.values());
  const mounts: Record<string, number> = Object.fromEntries(fsNames.live.map((n) => [n, 0]));
  for (const f of remoteFileSystems) {
    if (f.name in mounts) mounts[f.name] = (mounts[f.name] ?? 0) + f.mounts.size;
  }
  for (const [name, n] of Object.entries(mounts)) {
    if (wrong(FS.kind, name, n)) {
      violations.push(`${name}: ${n} mounts (expected ${wanted(FS.kind, name)})`);
    }
  }
  const remoteVolumes = [...emulator.state.volumes.records.values()];
  const bvCount = count(bvNames, (s) => s.volumes.records.values());
  const attached: Record<string, number> = {};
  bvNames.all.forEach((name, i) => {
    const key = `${BV.kind}/${name}`;
    if (!bvNames.live.includes(name) || held.has(key) || waiting.has(key)) return;
    attached[name] = remoteVolumes.filter(
      (v) => v.name === name && v.status === "in-use" && v.instanceId === bvInstance(i),
    ).length;
    if (attached[name] !== 1) {
      violations.push(
        `${name}: not attached to ${bvInstance(i)} (expected exactly 1 volume there)`,
      );
    }
  });
  const tplCount = count(tplNames, remoteTemplates);
  const strayRemote = [nasCount, taskCount, fsCount, bvCount, tplCount].flatMap((c) => c.stray);
  for (const s of strayRemote) violations.push(`remote resource without an object: ${s}`);
  for (const w of wrongAccount) violations.push(`a resource in the wrong account: ${w}`);

  const objects: KubeObject[] = [
    ...(await kube.list(NAS, namespace)).items,
    ...(await kube.list(JOB, namespace)).items,
    ...(await kube.list(FS, namespace)).items,
    ...(await kube.list(BV, namespace)).items,
    ...(await kube.list(TPL, namespace)).items,
  ];
  const byName = new Map(objects.map((o) => [`${o.kind}/${o.metadata?.name}`, o]));
  const notReady: string[] = [];
  const unknown: { name: string; message: string }[] = [];
  for (const { kind, live } of [nasNames, jobNames, fsNames, bvNames, tplNames]) {
    for (const name of live) {
      if (held.has(`${kind}/${name}`) || waiting.has(`${kind}/${name}`)) continue;
      const obj = byName.get(`${kind}/${name}`);
      if (!obj || !isReady(obj)) notReady.push(`${kind}/${name}`);
      const conditions =
        (obj?.status as { conditions?: Condition[] } | undefined)?.conditions ?? [];
      const stuck = conditions.find((c) => c.reason === "CreateOutcomeUnknown");
      if (stuck) unknown.push({ name: `${kind}/${name}`, message: stuck.message ?? "" });
    }
  }
  for (const n of notReady) violations.push(`${n} is not Ready`);
  for (const u of unknown)
    violations.push(`${u.name} stopped as CreateOutcomeUnknown: ${u.message}`);

  const log = await readFile(args.logFile, "utf8").catch(() => "");
  const apiKeyInLogLines = log.split("\n").filter((l) => l.includes(apiKey)).length;
  if (apiKeyInLogLines > 0) violations.push(`the API key is in ${apiKeyInLogLines} log line(s)`);
  const events = [
    ...((
      (await kube.request("GET", `/apis/events.k8s.io/v1/namespaces/${namespace}/events`)) as {
        items?: unknown[];
      }
    ).items ?? []),
    ...((
      (await kube.request("GET", `/api/v1/namespaces/${namespace}/events`)) as {
        items?: unknown[];
      }
    ).items ?? []),
  ];
  const apiKeyInEvents = events.filter((e) => JSON.stringify(e).includes(apiKey)).length;
  // Both APIs show the same Events: each object once.
  const repeated = new Set<string>();
  for (const e of events as {
    reason?: string;
    regarding?: ObjectRef;
    involvedObject?: ObjectRef;
  }[]) {
    const about = e.regarding ?? e.involvedObject;
    if (e.reason === "CreateRepeated" && about) repeated.add(`${about.kind}/${about.name}`);
  }
  if (apiKeyInEvents > 0) violations.push(`the API key is in ${apiKeyInEvents} Event(s)`);
  const apiKeyInObjects = objects.filter((o) => JSON.stringify(o).includes(apiKey)).length;
  if (apiKeyInObjects > 0) violations.push(`the API key is in ${apiKeyInObjects} object(s)`);

  const total = [nasNames, jobNames, fsNames, bvNames, tplNames].reduce(
    (t, n) => t + n.live.length,
    0,
  );
  return {
    remoteCounts: {
      nas: nasCount.counts,
      tasks: taskCount.counts,
      fileSystems: fsCount.counts,
      mounts,
      volumes: bvCount.counts,
      templates: tplCount.counts,
      attached,
    },
    strayRemote,
    wrongAccount,
    ready: total - notReady.length,
    total,
    notReady,
    createOutcomeUnknown: unknown,
    createsRepeated: [...repeated].sort(),
    logLines: log.split("\n").filter(Boolean).length,
    apiKeyInLogLines,
    apiKeyInEvents,
    apiKeyInObjects,
    eventsChecked: events.length,
    violations,
  };
}

/** The worlds of every account of `emulator` (ids are unique across them). */
export function accountStates(emulator: RunningEmulator): EmulatorState[] {
  return emulator.tenants.names().map((name) => emulator.tenants.get(name).state);
}

/** The templates of `state` with the name each carries (their record keeps it in fields). */
export function remoteTemplates(state: EmulatorState): { id: string; name: string }[] {
  return [...state.templates.values()].map((t) => ({
    id: t.id,
    name: String(t.fields.name ?? ""),
  }));
}

/** A service call as a replica's recording proxy saw it (replicas.ts). */
export interface ServiceCall {
  /** The operator process that made it. */
  instance: string;
  /** When it was sent, ms since the epoch (replicas.ts's recordingProxy says how). */
  at: number;
  method: string;
  path: string;
}

/** A process's hold of the Lease, from the Lease's acquireTime (replicas.ts). */
export interface LeaderTerm {
  instance: string;
  /** ms since the epoch. */
  from: number;
}

/**
 * One leader at a time: a process's service calls after the next leader acquired the
 * Lease, and a writing call of a process outside its own term (a standby), are
 * violations, one per process (a standby's reads, such as its probes, are not).
 */
export function checkOneActor(
  calls: readonly ServiceCall[],
  terms: readonly LeaderTerm[],
): string[] {
  const sorted = [...terms].sort((a, b) => a.from - b.from);
  const violations: string[] = [];
  for (const instance of new Set(calls.map((c) => c.instance))) {
    const own = sorted.findIndex((t) => t.instance === instance);
    const from = own < 0 ? Number.POSITIVE_INFINITY : (sorted[own]?.from ?? 0);
    const next = own < 0 ? undefined : sorted[own + 1];
    const mine = calls.filter((c) => c.instance === instance);
    const late = next ? mine.filter((c) => c.at > next.from) : [];
    const last = late.at(-1);
    if (next && last) {
      violations.push(
        `${instance} made ${late.length} service call(s) after ${next.instance} took the Lease, the last ${last.at - next.from} ms later: ${last.method} ${last.path}`,
      );
    }
    const standbyWrites = mine.filter((c) => c.at < from && c.method !== "GET");
    const write = standbyWrites[0];
    if (write) {
      violations.push(
        `${instance} made ${standbyWrites.length} writing call(s) without the Lease: ${write.method} ${write.path}`,
      );
    }
  }
  return violations;
}
