/**
 * `npm run bench -- [--n 500] [--idle-seconds 300] [--jobs-use-nas] ...`
 *
 * Starts a control plane and the emulator (subscriptions resolve at once), runs the
 * baseline (the minimal calls and writes) for N NasVolumes and N TrainingJobs, then
 * `aidc-operator run` as its own process for another N + N, and prints one JSON
 * document with both sets of figures and the operator's overhead as ratios. Then,
 * unless --skip-reference, the NasVolume comparison (`nasVolume`): the operator over
 * N NasVolumes alone and the Go reference operator (tools/reference-operator) over as
 * many, with operator / reference ratios. Then, unless --skip-connections, the
 * tenant-isolation scenario (`connections`, connections-phase.ts; --only-connections
 * runs it alone, --connections-n sets its N, default 50), and unless --skip-fairness
 * the fairness scenario (`fairness`, fairness-phase.ts: batches of that N beside
 * backlogs of --fairness-backlog, default 1,000; --only-fairness runs it alone), and
 * the calls of a TrainingJob's absence proof (`absence`, absence-phase.ts, no control
 * plane; --only-absence runs it alone).
 * With --small-n, the operator's run at that N comes first (`small`, and `scale`: the
 * main run's CPU per object and peak RSS against it); with --probes, each operator run
 * also times that many creates on the empty operator and as many at idle.
 * Progress goes to stderr; the operator's log to a file named in the output.
 */
import { mkdir, mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { operatorConfigSchema } from "../../src/config/schema.js";
import { apiServerWrites, writesBetween } from "../support/apiserver-writes.js";
import { buildOperator, processStats } from "../support/operator-process.js";
import { runAbsencePhase } from "./absence-phase.js";
import { runBaseline } from "./baseline.js";
import { runConnectionsPhase } from "./connections-phase.js";
import { type BenchEnvironment, startEnvironment } from "./environment.js";
import { runFairnessPhase } from "./fairness-phase.js";
import { runOperatorPhase } from "./operator-phase.js";
import { percentile } from "./ready-tracker.js";
import { runReferencePhase } from "./reference-phase.js";
import { BENCH_FLAGS } from "./script-flags.js";
import { ensureNamespace, NAS } from "./workload.js";

const { values: flags } = parseArgs({
  options: BENCH_FLAGS,
});

const env = process.env;
const num = (flag: string | undefined, envName: string, dflt: number): number => {
  const raw = flag ?? env[envName];
  const v = raw === undefined || raw === "" ? dflt : Number(raw);
  if (!Number.isFinite(v) || v < 0) throw new Error(`bad number for ${envName}: ${raw}`);
  return v;
};
const options = {
  n: num(flags.n, "AIDC_BENCH_N", 500),
  idleMs: num(flags["idle-seconds"], "AIDC_BENCH_IDLE_SECONDS", 300) * 1000,
  jobsUseNas: flags["jobs-use-nas"] ?? env.AIDC_BENCH_JOBS_USE_NAS === "true",
  // The operator's default workers per controller (config `concurrency`).
  concurrency: num(flags.concurrency, "AIDC_BENCH_CONCURRENCY", 16),
  createConcurrency: num(flags["create-concurrency"], "AIDC_BENCH_CREATE_CONCURRENCY", 10),
  pollIntervalMs: num(flags["poll-interval-ms"], "AIDC_BENCH_POLL_INTERVAL_MS", 0),
  baselinePollMs: num(flags["baseline-poll-ms"], "AIDC_BENCH_BASELINE_POLL_MS", 1000),
  timeoutMs: num(flags["timeout-seconds"], "AIDC_BENCH_TIMEOUT_SECONDS", 1800) * 1000,
  skipBaseline: flags["skip-baseline"] ?? false,
  skipReference: flags["skip-reference"] ?? env.AIDC_BENCH_SKIP_REFERENCE === "true",
  // The tenant-isolation scenario (connections-phase.ts): N per batch, default 50.
  skipConnections: flags["skip-connections"] ?? env.AIDC_BENCH_SKIP_CONNECTIONS === "true",
  onlyConnections: flags["only-connections"] ?? false,
  connectionsN: num(flags["connections-n"], "AIDC_BENCH_CONNECTIONS_N", 50),
  // The fairness scenario (fairness-phase.ts): batches of connectionsN beside backlogs.
  skipFairness: flags["skip-fairness"] ?? env.AIDC_BENCH_SKIP_FAIRNESS === "true",
  onlyFairness: flags["only-fairness"] ?? false,
  fairnessBacklog: num(flags["fairness-backlog"], "AIDC_BENCH_FAIRNESS_BACKLOG", 1000),
  fairnessBatches: Math.max(1, num(flags["fairness-batches"], "AIDC_BENCH_FAIRNESS_BATCHES", 3)),
  onlyAbsence: flags["only-absence"] ?? false,
  operatorConfig: flags["operator-config"] ?? env.AIDC_BENCH_OPERATOR_CONFIG,
  maxOldSpaceMiB: num(flags["max-old-space-mib"], "AIDC_BENCH_MAX_OLD_SPACE_MIB", 0),
  // Absent: the image's setting (IMAGE_NODE_ARGS); 0: Node's own default.
  maxSemiSpaceMiB:
    (flags["max-semi-space-mib"] ?? env.AIDC_BENCH_MAX_SEMI_SPACE_MIB ?? "") === ""
      ? undefined
      : num(flags["max-semi-space-mib"], "AIDC_BENCH_MAX_SEMI_SPACE_MIB", 0),
  compiled: flags.compiled ?? env.AIDC_BENCH_COMPILED === "true",
  // Where the operator's processes write V8 CPU profiles (`node --cpu-prof`), if anywhere.
  cpuProfDir: flags["cpu-prof-dir"] ?? env.AIDC_BENCH_CPU_PROF_DIR,
  // Where the operator's processes write a V8 heap snapshot at the end of their run.
  heapSnapshotDir: flags["heap-snapshot-dir"] ?? env.AIDC_BENCH_HEAP_SNAPSHOT_DIR,
  // Further Node options of the operator's processes (space-separated), after the others.
  nodeArgs: (flags["node-args"] ?? env.AIDC_BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean),
  // Probe NasVolumes created one at a time on the empty operator and after the idle window.
  probes: num(flags.probes, "AIDC_BENCH_PROBES", 0),
  // A first operator run at this N (each kind), for figures per object beside the main run's.
  smallN: num(flags["small-n"], "AIDC_BENCH_SMALL_N", 0),
};
/** Makes the directory `dir` (and its parents) if need be; resolves with it. */
const made = async (dir: string): Promise<string> => {
  await mkdir(dir, { recursive: true });
  return dir;
};
const progress = (line: string) => process.stderr.write(`[bench] ${line}\n`);

async function main(): Promise<number> {
  if (options.onlyAbsence) {
    const absence = await runAbsencePhase(progress);
    process.stdout.write(`${JSON.stringify({ absence }, null, 2)}\n`);
    return 0;
  }
  progress(
    `N=${options.n} (each kind), idle ${options.idleMs / 1000} s; starting the control plane`,
  );
  if (options.compiled) {
    progress("compiling the operator to dist/ (npm run build)");
    const build = await buildOperator();
    if (build.exitCode !== 0) {
      throw new Error(`the build (tsc -p tsconfig.build.json) failed:\n${build.output}`);
    }
  }
  const bench = await startEnvironment({ subscriptionDelayMs: 0 });
  const fairnessOptions = {
    n: options.connectionsN,
    batches: options.fairnessBatches,
    backlog: options.fairnessBacklog,
    timeoutMs: options.timeoutMs,
    pollIntervalMs: options.pollIntervalMs,
    compiled: options.compiled,
  };
  const logDir = await mkdtemp(join(tmpdir(), "aidc-bench-"));
  try {
    if (options.onlyFairness) {
      const fairness = await runFairnessPhase(bench, fairnessOptions, progress);
      process.stdout.write(`${JSON.stringify({ fairness }, null, 2)}\n`);
      return 0;
    }
    if (options.onlyConnections) {
      const connections = await runConnectionsPhase(
        bench,
        options.connectionsN,
        options.timeoutMs,
        progress,
      );
      process.stdout.write(`${JSON.stringify({ connections }, null, 2)}\n`);
      return 0;
    }
    let baseline: Record<string, unknown> | undefined;
    if (!options.skipBaseline) {
      await ensureNamespace(bench.kube, "bench-baseline");
      // Warm up the connection so that the first objects do not pay for TLS set-up.
      await bench.kube.list(NAS, "bench-baseline");
      const seq0 = bench.emulator.requestLog.lastSeq();
      const w0 = await apiServerWrites(bench.kc, "aidc.io");
      progress("baseline: minimal calls and writes");
      const b = await runBaseline({
        kube: bench.kube,
        serviceBaseUrl: bench.emulator.url,
        apiKey: bench.apiKey,
        namespace: "bench-baseline",
        prefix: "base",
        n: options.n,
        jobsUseNas: options.jobsUseNas,
        concurrency: options.concurrency,
        createConcurrency: options.createConcurrency,
        pollMs: options.baselinePollMs,
      });
      const writes = writesBetween(w0, await apiServerWrites(bench.kc, "aidc.io"));
      const calls = bench.emulator.requestLog.lastSeq() - seq0;
      baseline = {
        timeToAllReadyMs: b.timeToAllReadyMs,
        latencyMs: {
          p50: percentile(b.latenciesMs, 50),
          p95: percentile(b.latenciesMs, 95),
          p99: percentile(b.latenciesMs, 99),
        },
        serviceCalls: calls,
        serviceCallsPerResource: calls / (2 * options.n),
        kubeWrites: writes.total - 2 * options.n,
        kubeWritesPerResource: (writes.total - 2 * options.n) / (2 * options.n),
      };
      progress(`baseline: ${JSON.stringify(baseline)}`);
    }
    const defaults = await operatorDefaults(bench);
    const rate = defaults.service.rateLimit;
    const routineBudget = rate
      ? {
          perSecond: rate.ratePerSecond * defaults.service.routineCallShare,
          burst: Math.max(1, rate.burst * defaults.service.routineCallShare),
        }
      : undefined;
    const mixed = {
      jobsUseNas: options.jobsUseNas,
      concurrency: options.concurrency,
      createConcurrency: options.createConcurrency,
      timeoutMs: options.timeoutMs,
      probes: options.probes,
      ...(routineBudget ? { routineBudget } : {}),
      ...(options.pollIntervalMs > 0 ? { pollIntervalMs: options.pollIntervalMs } : {}),
      ...(options.operatorConfig ? { configFile: resolve(options.operatorConfig) } : {}),
      ...(options.maxOldSpaceMiB > 0 ? { maxOldSpaceMiB: options.maxOldSpaceMiB } : {}),
      ...(options.maxSemiSpaceMiB !== undefined
        ? { maxSemiSpaceMiB: options.maxSemiSpaceMiB }
        : {}),
      ...(options.compiled ? { compiled: true } : {}),
      extraNodeArgs: options.nodeArgs,
    };
    let small: Record<string, unknown> | null = null;
    if (options.smallN > 0) {
      await ensureNamespace(bench.kube, "bench-small");
      progress(`the operator at N=${options.smallN} first`);
      small = await runOperatorPhase(bench, {
        ...mixed,
        namespace: "bench-small",
        prefix: "sm",
        n: options.smallN,
        idleMs: Math.min(options.idleMs, 20_000),
        logFile: join(logDir, "operator-small.log"),
        progress,
      });
      // On stderr at once, so that a main run that fails still leaves these figures.
      progress(`N=${options.smallN}: ${JSON.stringify(small)}`);
    }
    await ensureNamespace(bench.kube, "bench");
    const operatorLog = join(logDir, "operator.log");
    const operator = await runOperatorPhase(bench, {
      ...mixed,
      namespace: "bench",
      prefix: "op",
      n: options.n,
      idleMs: options.idleMs,
      ...(options.cpuProfDir ? { cpuProfDir: resolve(options.cpuProfDir, "mixed") } : {}),
      ...(options.heapSnapshotDir
        ? { heapSnapshotDir: await made(resolve(options.heapSnapshotDir, "mixed")) }
        : {}),
      logFile: operatorLog,
      progress,
    });
    const controlPlane = await controlPlaneStats(bench);
    const nasVolume = options.skipReference
      ? null
      : await compareWithReference(bench, logDir, {
          ...(options.maxOldSpaceMiB > 0 ? { maxOldSpaceMiB: options.maxOldSpaceMiB } : {}),
          ...(options.maxSemiSpaceMiB !== undefined
            ? { maxSemiSpaceMiB: options.maxSemiSpaceMiB }
            : {}),
          ...(options.compiled ? { compiled: true } : {}),
          extraNodeArgs: options.nodeArgs,
          ...(options.cpuProfDir ? { cpuProfDir: resolve(options.cpuProfDir, "nas") } : {}),
          ...(options.heapSnapshotDir
            ? { heapSnapshotDir: await made(resolve(options.heapSnapshotDir, "nas")) }
            : {}),
        });
    const connections = options.skipConnections
      ? null
      : await runConnectionsPhase(bench, options.connectionsN, options.timeoutMs, progress);
    const fairness = options.skipFairness
      ? null
      : await runFairnessPhase(bench, fairnessOptions, progress);
    const absence = await runAbsencePhase(progress);
    const ratio = (key: string) => {
      const a = operator[key];
      const b = baseline?.[key];
      return typeof a === "number" && typeof b === "number" && b > 0
        ? Math.round((a / b) * 100) / 100
        : null;
    };
    const p95 = (r: Record<string, unknown> | undefined) =>
      (r?.latencyMs as { p95?: number } | undefined)?.p95;
    const report = {
      n: options.n,
      jobsUseNas: options.jobsUseNas,
      concurrency: options.concurrency,
      operator,
      small,
      scale: small ? scaleRatios(small, operator) : null,
      controlPlane,
      baseline: baseline ?? null,
      nasVolume,
      connections,
      fairness,
      absence,
      overhead: {
        timeToAllReady: ratio("timeToAllReadyMs"),
        latencyP95:
          baseline && p95(baseline)
            ? Math.round(((p95(operator) ?? 0) / (p95(baseline) ?? 1)) * 100) / 100
            : null,
        serviceCalls: ratio("serviceCallsPerResource"),
        kubeWrites: ratio("kubeWritesPerResource"),
      },
      operatorLog,
    };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    return operator.allReady === true ? 0 : 1;
  } finally {
    await bench.stop();
  }
}

/** The operator's settings in this run: its config file's (`--operator-config`), else defaults. */
async function operatorDefaults(bench: BenchEnvironment) {
  const file = options.operatorConfig
    ? (JSON.parse(await readFile(resolve(options.operatorConfig), "utf8")) as {
        kube?: object;
        service?: object;
      })
    : {};
  return operatorConfigSchema.parse({
    ...file,
    service: { ...file.service, baseUrl: bench.emulator.url, allowInsecureHttp: true },
  });
}

/** Peak and current RSS and CPU seconds of the API server and etcd (when started here). */
async function controlPlaneStats(bench: BenchEnvironment): Promise<Record<string, unknown>> {
  const pids = bench.plane?.pids() ?? {};
  return {
    apiServer: pids.apiServer ? ((await processStats(pids.apiServer)) ?? null) : null,
    etcd: pids.etcd ? ((await processStats(pids.etcd)) ?? null) : null,
  };
}

/** The main run's CPU per object and peak RSS against the small run's. */
function scaleRatios(small: Record<string, unknown>, large: Record<string, unknown>) {
  const proc = (r: Record<string, unknown>) =>
    r.process as { cpuMsPerObject?: number | null; peakRssMiB?: number };
  const ratio = (a?: number | null, b?: number | null) =>
    typeof a === "number" && typeof b === "number" && b > 0
      ? Math.round((a / b) * 100) / 100
      : null;
  return {
    cpuMsPerObject: ratio(proc(large).cpuMsPerObject, proc(small).cpuMsPerObject),
    peakRss: ratio(proc(large).peakRssMiB, proc(small).peakRssMiB),
  };
}

/**
 * The NasVolume comparison: the operator over N NasVolumes alone, then the Go
 * reference operator (tools/reference-operator) over as many, both with the
 * operator's client limits (its defaults, or those of `--operator-config`); `ratio` is
 * operator / reference.
 */
async function compareWithReference(
  bench: BenchEnvironment,
  logDir: string,
  extra: {
    maxOldSpaceMiB?: number;
    maxSemiSpaceMiB?: number;
    compiled?: boolean;
    extraNodeArgs?: string[];
    cpuProfDir?: string;
    heapSnapshotDir?: string;
  },
): Promise<Record<string, unknown>> {
  // The operator's limits (its config file's, when given) are the reference's too.
  const defaults = await operatorDefaults(bench);
  await ensureNamespace(bench.kube, "bench-nas");
  progress("NasVolumes alone: the operator");
  const operator = await runOperatorPhase(bench, {
    namespace: "bench-nas",
    prefix: "opnas",
    n: options.n,
    nasOnly: true,
    jobsUseNas: false,
    concurrency: options.concurrency,
    createConcurrency: options.createConcurrency,
    idleMs: 0,
    timeoutMs: options.timeoutMs,
    ...(options.operatorConfig ? { configFile: resolve(options.operatorConfig) } : {}),
    ...extra,
    logFile: join(logDir, "operator-nas.log"),
    progress,
  });
  await ensureNamespace(bench.kube, "bench-go");
  progress("NasVolumes alone: the reference operator (Go, controller-runtime)");
  const reference = await runReferencePhase(bench, {
    namespace: "bench-go",
    prefix: "go",
    n: options.n,
    concurrency: options.concurrency,
    createConcurrency: options.createConcurrency,
    kubeQps: defaults.kube.qps,
    kubeBurst: defaults.kube.burst,
    serviceRate: defaults.service.rateLimit?.ratePerSecond ?? 50,
    serviceBurst: defaults.service.rateLimit?.burst ?? 100,
    timeoutMs: options.timeoutMs,
    logFile: join(logDir, "reference.log"),
    progress,
  }).catch((err: unknown) => {
    // No Go toolchain, or no module proxy: the operator's figures still stand.
    const message = err instanceof Error ? err.message : String(err);
    progress(`the reference operator did not run: ${message}`);
    return { error: message };
  });
  const num = (r: Record<string, unknown>, path: string[]): number | undefined => {
    let v: unknown = r;
    for (const k of path) v = (v as Record<string, unknown> | undefined)?.[k];
    return typeof v === "number" ? v : undefined;
  };
  const ratio = (path: string[]) => {
    const a = num(operator, path);
    const b = num(reference, path);
    return a !== undefined && b !== undefined && b > 0 ? Math.round((a / b) * 100) / 100 : null;
  };
  return {
    operator,
    reference,
    ratio: {
      timeToAllReady: ratio(["timeToAllReadyMs"]),
      latencyP95: ratio(["latencyMs", "p95"]),
      serviceCalls: ratio(["serviceCallsPerResource"]),
      kubeWrites: ratio(["kubeWritesPerResource"]),
      cpuSeconds: ratio(["process", "cpuSeconds"]),
      peakRss: ratio(["process", "peakRssMiB"]),
      rssAtReady: ratio(["process", "atReady", "rssMiB"]),
    },
  };
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`[bench] failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
