/**
 * The operator's half of the benchmark: `aidc-operator run` as its own process
 * watching one namespace; N NasVolumes and N TrainingJobs applied; time until all are
 * Ready, apply→Ready latencies, reconciles, service calls and Kubernetes writes per
 * resource; then an idle window; and the process's peak RSS and CPU seconds.
 */
import { freePort } from "../../src/controlplane/controlplane.js";
import { apiServerWrites, type WriteCounts, writesBetween } from "../support/apiserver-writes.js";
import {
  connectionsTo,
  IMAGE_NODE_ARGS,
  processStats,
  sleep,
  startOperatorProcess,
} from "../support/operator-process.js";
import { sumBy } from "../support/prometheus.js";
import type { BenchEnvironment } from "./environment.js";
import { idleRates, probeCreates } from "./idle-probe.js";
import {
  heapFigures,
  heapSnapshotNodeArgs,
  MemorySampler,
  takeHeapSnapshot,
} from "./memory-probe.js";
import { percentile, ReadyTracker } from "./ready-tracker.js";
import { inParallel, JOB, jobName, NAS, nasName, nasVolume, trainingJob } from "./workload.js";

/** Options of {@link runOperatorPhase}. */
export interface OperatorPhaseOptions {
  namespace: string;
  prefix: string;
  n: number;
  jobsUseNas: boolean;
  concurrency: number;
  createConcurrency: number;
  idleMs: number;
  timeoutMs: number;
  /** Only NasVolumes (no TrainingJobs): the comparison with the reference operator. */
  nasOnly?: boolean;
  /** AIDC_POLL_INTERVAL_MS, when set (default: the operator's own). */
  pollIntervalMs?: number;
  /** An operator config file (AIDC_CONFIG), e.g. to change `kube.qps`. */
  configFile?: string;
  /** The operator's V8 old-space limit (`--max-old-space-size`), in MiB; Node's default when unset. */
  maxOldSpaceMiB?: number;
  /**
   * V8's young generation limit (`--max-semi-space-size`), in MiB: absent, the image's
   * setting ({@link IMAGE_NODE_ARGS}); 0, Node's own default.
   */
  maxSemiSpaceMiB?: number;
  /** Run the compiled operator (dist/, as in the image) instead of src/ through tsx. */
  compiled?: boolean;
  /** With `compiled`: another build's bundle entry to run (test/bench/compare-builds.ts). */
  compiledMain?: string;
  /** Further Node options (`--node-args`), after the others: V8 settings to compare. */
  extraNodeArgs?: string[];
  /** Where the operator writes a V8 CPU profile at exit (`--cpu-prof-dir`), if anywhere. */
  cpuProfDir?: string;
  /** Where the operator writes a V8 heap snapshot at the end of the idle window, if anywhere. */
  heapSnapshotDir?: string;
  /**
   * Probe NasVolumes created one at a time on the empty operator, and as many after the
   * idle window (`--probes`, idle-probe.ts); 0 or absent: none.
   */
  probes?: number;
  /** The routine budget of a connection (calls per second, burst), to judge the idle rate. */
  routineBudget?: { perSecond: number; burst: number };
  logFile: string;
  progress: (line: string) => void;
}

interface Counters {
  at: number;
  serviceSeq: number;
  aidcWrites: WriteCounts;
  eventWrites: WriteCounts;
  reconciles: Record<string, number>;
  /** Seconds requests waited for the client-side rate limits (summed over requests). */
  rateLimitWait: Record<string, number>;
  changes: number;
  fields: Record<string, number>;
}

/** Runs the operator's half; resolves with the figures (JSON-ready). */
export async function runOperatorPhase(
  env: BenchEnvironment,
  o: OperatorPhaseOptions,
): Promise<Record<string, unknown>> {
  const nodeArgs = [
    ...(o.maxOldSpaceMiB ? [`--max-old-space-size=${o.maxOldSpaceMiB}`] : []),
    // The image's options; --max-semi-space-mib replaces only its young generation cap.
    ...IMAGE_NODE_ARGS.filter(
      (a) => o.maxSemiSpaceMiB === undefined || !a.startsWith("--max-semi-space-size="),
    ),
    ...(o.maxSemiSpaceMiB ? [`--max-semi-space-size=${o.maxSemiSpaceMiB}`] : []),
    ...(o.cpuProfDir ? ["--cpu-prof", `--cpu-prof-dir=${o.cpuProfDir}`] : []),
    ...(o.heapSnapshotDir ? heapSnapshotNodeArgs(o.heapSnapshotDir) : []),
    ...(o.extraNodeArgs ?? []),
  ];
  const operator = startOperatorProcess({
    kubeconfig: env.kubeconfigPath,
    serviceBaseUrl: env.emulator.url,
    apiKey: env.apiKey,
    metricsPort: await freePort(),
    logFile: o.logFile,
    nodeArgs,
    ...(o.compiled ? { compiled: true } : {}),
    ...(o.compiledMain ? { compiledMain: o.compiledMain } : {}),
    env: {
      AIDC_WATCH_NAMESPACES: o.namespace,
      AIDC_CONCURRENCY: String(o.concurrency),
      ...(o.pollIntervalMs ? { AIDC_POLL_INTERVAL_MS: String(o.pollIntervalMs) } : {}),
      ...(o.configFile ? { AIDC_CONFIG: o.configFile } : {}),
    },
  });
  const trackers = [NAS, JOB].map((res) => new ReadyTracker(env.kc, env.kube, res, o.namespace));
  const [nasTracker, jobTracker] = trackers as [ReadyTracker, ReadyTracker];
  const jobs = o.nasOnly ? 0 : o.n;
  const total = o.n + jobs;
  const apiServerPort = Number(new URL(env.kc.getCurrentCluster()?.server ?? "").port);
  try {
    await operator.waitReady(120_000);
    const atReady = await processStats(operator.pid);
    const sampler = new MemorySampler(operator.pid, () => operator.metrics());
    for (const t of trackers) await t.start();
    const counters = async (): Promise<Counters> => {
      const metrics = await operator.metrics();
      return {
        at: Date.now(),
        serviceSeq: env.emulator.requestLog.lastSeq(),
        aidcWrites: await apiServerWrites(env.kc, "aidc.io"),
        eventWrites: await apiServerWrites(env.kc, "events.k8s.io"),
        reconciles: sumBy(metrics, "controller_runtime_reconcile_total", "controller"),
        rateLimitWait: rateLimitWaits(metrics),
        changes: nasTracker.changes() + jobTracker.changes(),
        fields: mergeCounts(nasTracker.changedFields(), jobTracker.changedFields()),
      };
    };
    const probes = o.probes ?? 0;
    const probeEmpty = await probeCreates(env, nasTracker, o.namespace, `${o.prefix}-pe`, probes);
    const before = await counters();
    o.progress(
      `operator ready (pid ${operator.pid}); applying ${o.n} NasVolumes and ${jobs} TrainingJobs`,
    );

    const objs = [];
    for (let i = 0; i < o.n; i++) {
      objs.push({ res: NAS, obj: nasVolume(o.namespace, o.prefix, i), t: nasTracker });
      if (i >= jobs) continue;
      objs.push({
        res: JOB,
        obj: trainingJob(o.namespace, o.prefix, i, o.jobsUseNas),
        t: jobTracker,
      });
    }
    const started = Date.now();
    await inParallel(objs, o.createConcurrency, async ({ res, obj, t }) => {
      t.markApplied(obj.metadata?.name ?? "", Date.now());
      await env.kube.create(res, obj);
    });
    const nasNames = Array.from({ length: o.n }, (_, i) => nasName(o.prefix, i));
    const jobNames = Array.from({ length: jobs }, (_, i) => jobName(o.prefix, i));
    const deadline = started + o.timeoutMs;
    let lastReport = 0;
    let exitCode: number | string | undefined;
    void operator.exited.then((code) => {
      exitCode = code;
    });
    for (;;) {
      if (exitCode !== undefined) {
        throw new Error(
          `the operator exited (${exitCode}) before all were Ready; see ${o.logFile}`,
        );
      }
      const waiting = nasTracker.notReady(nasNames).length + jobTracker.notReady(jobNames).length;
      if (waiting === 0 || Date.now() > deadline) break;
      if (Date.now() - lastReport > 10_000) {
        o.progress(`${total - waiting}/${total} Ready after ${Date.now() - started} ms`);
        lastReport = Date.now();
      }
      await sleep(100);
    }
    const notReady = [...nasTracker.notReady(nasNames), ...jobTracker.notReady(jobNames)];
    const lastReady = Math.max(nasTracker.lastReadyAt(), jobTracker.lastReadyAt());
    const converged = await counters();
    const connectionsAtAllReady = await connectionsTo(operator.pid, apiServerPort);
    // Ready is not the end of the work: a TrainingJob's storages and pods are read in a
    // follow-up poll (Reconciling=True until then). The idle window starts once no
    // object is Reconciling, so that it measures a settled fleet.
    const reconciling = () => [
      ...nasTracker.reconciling(nasNames),
      ...jobTracker.reconciling(jobNames),
    ];
    o.progress(
      `${total - notReady.length}/${total} Ready, the last after ${lastReady - started} ms; waiting until none is Reconciling`,
    );
    while (reconciling().length > 0 && Date.now() < deadline) {
      if (Date.now() - lastReport > 30_000) {
        o.progress(`${reconciling().length} still Reconciling`);
        lastReport = Date.now();
      }
      await sleep(100);
    }
    const settled = await counters();
    const settledBudgetWait = await routineBudgetWait(operator.metrics());
    o.progress(
      `${total - notReady.length}/${total} Ready, ${total - reconciling().length} settled ${settled.at - converged.at} ms later; idle window of ${o.idleMs / 1000} s`,
    );
    await sleep(o.idleMs);
    const idle = await counters();
    const idleBudgetWait = await routineBudgetWait(operator.metrics());
    const stats = await processStats(operator.pid);
    // Created after the figures above, so that the idle window's counters leave them out.
    const probeIdle = await probeCreates(env, nasTracker, o.namespace, `${o.prefix}-pi`, probes);
    const heap = heapFigures(await operator.metrics());
    const atPeak = await sampler.stop();
    const heapSnapshot = o.heapSnapshotDir
      ? await takeHeapSnapshot(operator.pid, o.heapSnapshotDir)
      : undefined;

    const cpuMsPerObject =
      stats && atReady ? round(((stats.cpuSeconds - atReady.cpuSeconds) * 1000) / total) : null;
    const perResource = (n: number) => round(n / total);
    const perHour = (n: number) => round((n / total) * (3_600_000 / Math.max(1, o.idleMs)));
    const nasLatencies = nasTracker.latencies(nasNames);
    const all = [...nasLatencies, ...jobTracker.latencies()];
    const applyWrites = writesBetween(before.aidcWrites, converged.aidcWrites);
    // The benchmark's own creates are not the operator's writes.
    const operatorWrites = applyWrites.total - total;
    const idleWrites = writesBetween(settled.aidcWrites, idle.aidcWrites);
    const idleEvents = writesBetween(settled.eventWrites, idle.eventWrites);
    const idleCalls = idle.serviceSeq - settled.serviceSeq;
    const settleWrites = writesBetween(converged.aidcWrites, settled.aidcWrites);
    return {
      allReady: notReady.length === 0,
      notReady: notReady.slice(0, 20),
      timeToAllReadyMs: notReady.length === 0 ? lastReady - started : null,
      latencyMs: {
        p50: percentile(all, 50),
        p95: percentile(all, 95),
        p99: percentile(all, 99),
        nas: {
          p50: percentile(nasLatencies, 50),
          p95: percentile(nasLatencies, 95),
        },
        jobs: {
          p50: percentile(jobTracker.latencies(), 50),
          p95: percentile(jobTracker.latencies(), 95),
        },
      },
      reconciles: diff(before.reconciles, converged.reconciles),
      reconcilesPerResource: perResource(sumValues(diff(before.reconciles, converged.reconciles))),
      serviceCalls: converged.serviceSeq - before.serviceSeq,
      serviceCallsPerResource: perResource(converged.serviceSeq - before.serviceSeq),
      serviceCallsByEndpoint: byEndpoint(env, before.serviceSeq, converged.serviceSeq),
      kubeWrites: operatorWrites,
      kubeWritesPerResource: perResource(operatorWrites),
      kubeWritesByResource: applyWrites.byResource,
      kubeWritesRefused: applyWrites.refused,
      eventWrites: writesBetween(before.eventWrites, converged.eventWrites).total,
      // Seconds per object its requests waited for each client-side rate limit, from
      // the first create to the last Ready: the limit with the longest waits sets the pace.
      rateLimitWaitSecondsPerResource: Object.fromEntries(
        Object.entries(converged.rateLimitWait).map(([k, v]) => [
          k,
          perResource(v - (before.rateLimitWait[k] ?? 0)),
        ]),
      ),
      objectChangesPerResource: perResource(converged.changes - before.changes),
      changedFields: diff(before.fields, converged.fields),
      // From all Ready until no object is Reconciling (work left after Ready).
      settle: {
        afterAllReadyMs: settled.at - converged.at,
        notSettled: reconciling().slice(0, 20),
        serviceCalls: settled.serviceSeq - converged.serviceSeq,
        serviceCallsByEndpoint: byEndpoint(env, converged.serviceSeq, settled.serviceSeq),
        kubeWrites: settleWrites.total,
        eventWrites: writesBetween(converged.eventWrites, settled.eventWrites).total,
        // Create to settled, everything the operator did per object.
        serviceCallsPerResource: perResource(settled.serviceSeq - before.serviceSeq),
        kubeWritesPerResource: perResource(operatorWrites + settleWrites.total),
      },
      idle: {
        windowMs: idle.at - settled.at,
        kubeWrites: idleWrites.total,
        kubeWritesRefused: idleWrites.refused,
        kubeWritesByResource: idleWrites.byResource,
        eventWrites: idleEvents.total,
        objectChanges: idle.changes - settled.changes,
        changedFields: diff(settled.fields, idle.fields),
        reconciles: sumValues(diff(settled.reconciles, idle.reconciles)),
        serviceCalls: idleCalls,
        serviceCallsPerResourcePerHour: perHour(idleCalls),
        serviceCallsByEndpoint: byEndpoint(env, settled.serviceSeq, idle.serviceSeq),
        // Calls per second of each account against its routine budget, and the seconds
        // routine calls waited for that budget alone (observation stretched to fit it).
        byConnection: idleRates(
          env,
          settled.serviceSeq,
          idle.serviceSeq,
          idle.at - settled.at,
          o.routineBudget,
        ),
        routineBudgetWaitSeconds: round(idleBudgetWait - settledBudgetWait),
      },
      // Probe NasVolumes, one at a time: on the empty operator, and after the idle window.
      probes:
        probeEmpty && probeIdle
          ? {
              empty: probeEmpty,
              atIdle: probeIdle,
              ratioP50: round(probeIdle.p50 / probeEmpty.p50),
            }
          : null,
      process: {
        pid: operator.pid,
        ...stats,
        // CPU from operator ready to the end of the idle window, per fleet object.
        cpuMsPerObject,
        maxOldSpaceMiB: o.maxOldSpaceMiB ?? null,
        nodeArgs,
        runs: o.compiled ? "dist/bundle/main.js (compiled, bundled)" : "src/cli/main.ts (tsx)",
        // V8's heap at the end of the idle window (nodejs_heap_size_*_bytes of /metrics).
        ...heap,
        // The memory split at the highest RSS seen (sampled each second).
        atPeak,
        ...(o.heapSnapshotDir ? { heapSnapshot: heapSnapshot ?? null } : {}),
        // Established TCP connections to the API server when the last object was Ready.
        apiServerConnectionsAtAllReady: connectionsAtAllReady ?? null,
        // Startup alone (tsx unless compiled, client-node, caches of empty namespaces).
        atReady: atReady ? { rssMiB: atReady.rssMiB, cpuSeconds: atReady.cpuSeconds } : null,
      },
    };
  } finally {
    for (const t of trackers) t.stop();
    await operator.stop();
  }
}

/**
 * Seconds waited for each client-side rate limit, from the operator's /metrics text:
 * `kube` (the reconciles' Kubernetes requests), `kubeEvents` (the Events' own limiter),
 * `service` (service calls, every priority and connection).
 */
function rateLimitWaits(metrics: string): Record<string, number> {
  const kube = sumBy(metrics, "rest_client_rate_limiter_duration_seconds_sum", "limiter");
  const service = sumBy(metrics, "aidc_service_rate_limit_wait_seconds_sum", "priority");
  return {
    kube: kube.requests ?? 0,
    kubeEvents: kube.events ?? 0,
    service: Object.values(service).reduce((a, b) => a + b, 0),
  };
}

/** Seconds routine calls waited for their routine budget alone, every connection. */
async function routineBudgetWait(metrics: Promise<string>): Promise<number> {
  const byConnection = sumBy(
    await metrics,
    "aidc_service_routine_budget_wait_seconds_total",
    "connection",
  );
  return Object.values(byConnection).reduce((a, b) => a + b, 0);
}

function byEndpoint(env: BenchEnvironment, from: number, to: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of env.emulator.requestLog.read({ since: from })) {
    if (e.seq > to) break;
    const k = e.endpoint ?? `${e.method} ${e.path}`;
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

function diff(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(b)) if (v !== (a[k] ?? 0)) out[k] = v - (a[k] ?? 0);
  return out;
}

function mergeCounts(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v;
  return out;
}

function sumValues(r: Record<string, number>): number {
  return Object.values(r).reduce((a, b) => a + b, 0);
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
