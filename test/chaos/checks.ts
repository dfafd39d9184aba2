/**
 * The invariants the chaos run ends with: exactly one remote resource per object (and
 * exactly one mount per FileSystem, each BlockVolume's volume attached to its instance),
 * every object Ready, no object stopped as CreateOutcomeUnknown (each one listed),
 * and the API key in no log line and no Event.
 */
import { readFile } from "node:fs/promises";
import type { RunningEmulator } from "../../src/emulator/server.js";
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
    /** Remote volumes of each BlockVolume's name attached to its instance (each must be 1). */
    attached: Record<string, number>;
  };
  /** Remote resources carrying the run's prefix but no object's name. */
  strayRemote: string[];
  ready: number;
  total: number;
  notReady: string[];
  createOutcomeUnknown: { name: string; message: string }[];
  /** Lines of the operator's log that were searched for the key. */
  logLines: number;
  apiKeyInLogLines: number;
  apiKeyInEvents: number;
  apiKeyInObjects: number;
  eventsChecked: number;
  violations: string[];
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
  apiKey: string;
  logFile: string;
}): Promise<ChaosFindings> {
  const { kube, emulator, namespace, prefix, apiKey } = args;
  const violations: string[] = [];
  const nasNames = Array.from({ length: args.nas }, (_, i) => nasName(prefix, i));
  const jobNames = Array.from({ length: args.jobs }, (_, i) => jobName(prefix, i));
  const fsNames = Array.from({ length: args.fileSystems ?? 0 }, (_, i) => fsName(prefix, i));
  const bvNames = Array.from({ length: args.blockVolumes ?? 0 }, (_, i) => bvName(prefix, i));

  const count = (names: string[], remote: Iterable<{ name: string; id: string }>) => {
    const counts: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]));
    const stray: string[] = [];
    for (const r of remote) {
      if (r.name in counts) counts[r.name] = (counts[r.name] ?? 0) + 1;
      else if (r.name.startsWith(`${prefix}-`)) stray.push(`${r.name} (${r.id})`);
    }
    for (const [name, n] of Object.entries(counts)) {
      if (n !== 1) violations.push(`${name}: ${n} remote resources (expected exactly 1)`);
    }
    return { counts, stray };
  };
  const nasCount = count(nasNames, emulator.state.nas.values());
  const taskCount = count(jobNames, emulator.state.tasks.values());
  const remoteFileSystems = [...emulator.state.fileSystems.byId.values()];
  const fsCount = count(fsNames, remoteFileSystems);
  const mounts: Record<string, number> = Object.fromEntries(fsNames.map((n) => [n, 0]));
  for (const f of remoteFileSystems) {
    if (f.name in mounts) mounts[f.name] = (mounts[f.name] ?? 0) + f.mounts.size;
  }
  for (const [name, n] of Object.entries(mounts)) {
    if (n !== 1) violations.push(`${name}: ${n} mounts (expected exactly 1)`);
  }
  const remoteVolumes = [...emulator.state.volumes.records.values()];
  const bvCount = count(bvNames, remoteVolumes);
  const attached: Record<string, number> = {};
  bvNames.forEach((name, i) => {
    attached[name] = remoteVolumes.filter(
      (v) => v.name === name && v.status === "in-use" && v.instanceId === bvInstance(i),
    ).length;
    if (attached[name] !== 1) {
      violations.push(
        `${name}: not attached to ${bvInstance(i)} (expected exactly 1 volume there)`,
      );
    }
  });
  const strayRemote = [...nasCount.stray, ...taskCount.stray, ...fsCount.stray, ...bvCount.stray];
  for (const s of strayRemote) violations.push(`remote resource without an object: ${s}`);

  const objects: KubeObject[] = [
    ...(await kube.list(NAS, namespace)).items,
    ...(await kube.list(JOB, namespace)).items,
    ...(await kube.list(FS, namespace)).items,
    ...(await kube.list(BV, namespace)).items,
  ];
  const byName = new Map(objects.map((o) => [`${o.kind}/${o.metadata?.name}`, o]));
  const notReady: string[] = [];
  const unknown: { name: string; message: string }[] = [];
  for (const [kind, names] of [
    [NAS.kind, nasNames],
    [JOB.kind, jobNames],
    [FS.kind, fsNames],
    [BV.kind, bvNames],
  ] as const) {
    for (const name of names) {
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
  if (apiKeyInEvents > 0) violations.push(`the API key is in ${apiKeyInEvents} Event(s)`);
  const apiKeyInObjects = objects.filter((o) => JSON.stringify(o).includes(apiKey)).length;
  if (apiKeyInObjects > 0) violations.push(`the API key is in ${apiKeyInObjects} object(s)`);

  return {
    remoteCounts: {
      nas: nasCount.counts,
      tasks: taskCount.counts,
      fileSystems: fsCount.counts,
      mounts,
      volumes: bvCount.counts,
      attached,
    },
    strayRemote,
    ready: nasNames.length + jobNames.length + fsNames.length + bvNames.length - notReady.length,
    total: nasNames.length + jobNames.length + fsNames.length + bvNames.length,
    notReady,
    createOutcomeUnknown: unknown,
    logLines: log.split("\n").filter(Boolean).length,
    apiKeyInLogLines,
    apiKeyInEvents,
    apiKeyInObjects,
    eventsChecked: events.length,
    violations,
  };
}
