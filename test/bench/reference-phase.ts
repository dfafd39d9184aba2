/**
 * The reference operator's part of the benchmark: tools/reference-operator (Go,
 * controller-runtime, the same NasVolume protocol and client limits) as its own
 * process watching one namespace; N NasVolumes applied; time until all are Ready,
 * apply→Ready latencies, service calls and Kubernetes writes per object, CPU seconds,
 * peak RSS and TCP connections to the API server — the figures the operator's
 * NasVolume-only run reports, measured the same way.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { repoRoot } from "../../src/controlplane/binaries.js";
import { freePort } from "../../src/controlplane/controlplane.js";
import { apiServerWrites, writesBetween } from "../support/apiserver-writes.js";
import { connectionsTo, processStats, sleep } from "../support/operator-process.js";
import type { BenchEnvironment } from "./environment.js";
import { percentile, ReadyTracker } from "./ready-tracker.js";
import { inParallel, NAS, nasName, nasVolume } from "./workload.js";

const run = promisify(execFile);

/** Options of {@link runReferencePhase}. */
export interface ReferencePhaseOptions {
  namespace: string;
  prefix: string;
  n: number;
  /** Concurrent reconciles (the operator's workers per controller). */
  concurrency: number;
  createConcurrency: number;
  /** Kubernetes client limit, as the operator's config has it. */
  kubeQps: number;
  kubeBurst: number;
  /** Service client limit, as the operator's config has it. */
  serviceRate: number;
  serviceBurst: number;
  timeoutMs: number;
  logFile: string;
  progress: (line: string) => void;
}

/** Builds (first run) or finds the cached binary: tools/reference-operator/build.sh. */
export async function referenceOperatorBinary(): Promise<string> {
  const script = join(repoRoot, "tools", "reference-operator", "build.sh");
  const { stdout } = await run("bash", [script], {
    maxBuffer: 16 * 1024 * 1024,
    timeout: 60 * 60 * 1000,
  });
  return stdout.trim().split("\n").pop() ?? "";
}

/** Runs the reference operator over N NasVolumes; resolves with its figures. */
export async function runReferencePhase(
  env: BenchEnvironment,
  o: ReferencePhaseOptions,
): Promise<Record<string, unknown>> {
  const binary = await referenceOperatorBinary();
  const probePort = await freePort();
  const child: ChildProcess = spawn(
    binary,
    [
      `--kubeconfig=${env.kubeconfigPath}`,
      `--namespace=${o.namespace}`,
      `--service-base-url=${env.emulator.url}`,
      `--workers=${o.concurrency}`,
      `--kube-qps=${o.kubeQps}`,
      `--kube-burst=${o.kubeBurst}`,
      `--service-rate=${o.serviceRate}`,
      `--service-burst=${o.serviceBurst}`,
      `--health-probe-bind-address=127.0.0.1:${probePort}`,
    ],
    {
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", AIDC_API_KEY: env.apiKey },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const log = (chunk: Buffer) => appendFileSync(o.logFile, chunk);
  child.stdout?.on("data", log);
  child.stderr?.on("data", log);
  const pid = child.pid ?? -1;
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const tracker = new ReadyTracker(env.kc, env.kube, NAS, o.namespace);
  const apiServerPort = Number(new URL(env.kc.getCurrentCluster()?.server ?? "").port);
  try {
    const readyBy = Date.now() + 120_000;
    while (
      !(await fetch(`http://127.0.0.1:${probePort}/readyz`).then(
        (r) => r.ok,
        () => false,
      ))
    ) {
      if (Date.now() > readyBy || child.exitCode !== null) {
        throw new Error(`the reference operator did not become ready; see ${o.logFile}`);
      }
      await sleep(100);
    }
    const atReady = await processStats(pid);
    await tracker.start();
    const seq0 = env.emulator.requestLog.lastSeq();
    const w0 = await apiServerWrites(env.kc, "aidc.io");
    o.progress(`reference operator ready (pid ${pid}); applying ${o.n} NasVolumes`);
    const names = Array.from({ length: o.n }, (_, i) => nasName(o.prefix, i));
    const started = Date.now();
    await inParallel(names, o.createConcurrency, async (name, i) => {
      tracker.markApplied(name, Date.now());
      await env.kube.create(NAS, nasVolume(o.namespace, o.prefix, i));
    });
    while (tracker.notReady(names).length > 0 && Date.now() < started + o.timeoutMs) {
      if (child.exitCode !== null)
        throw new Error(`the reference operator exited; see ${o.logFile}`);
      await sleep(100);
    }
    const notReady = tracker.notReady(names);
    const connections = await connectionsTo(pid, apiServerPort);
    const stats = await processStats(pid);
    const calls = env.emulator.requestLog.lastSeq() - seq0;
    const writes = writesBetween(w0, await apiServerWrites(env.kc, "aidc.io"));
    const per = (v: number) => Math.round((v / o.n) * 100) / 100;
    return {
      allReady: notReady.length === 0,
      timeToAllReadyMs: notReady.length === 0 ? tracker.lastReadyAt() - started : null,
      latencyMs: {
        p50: percentile(tracker.latencies(), 50),
        p95: percentile(tracker.latencies(), 95),
        p99: percentile(tracker.latencies(), 99),
      },
      serviceCallsPerResource: per(calls),
      // The benchmark's own creates are not the operator's writes.
      kubeWritesPerResource: per(writes.total - o.n),
      kubeWritesRefused: writes.refused,
      process: {
        pid,
        ...stats,
        cpuPerObjectMs: stats ? Math.round((stats.cpuSeconds * 1000) / o.n) : null,
        apiServerConnectionsAtAllReady: connections ?? null,
        atReady: atReady ? { rssMiB: atReady.rssMiB, cpuSeconds: atReady.cpuSeconds } : null,
        runs: "tools/reference-operator (Go, controller-runtime)",
      },
    };
  } finally {
    tracker.stop();
    child.kill("SIGTERM");
    await Promise.race([exited, sleep(10_000)]);
    if (child.exitCode === null) child.kill("SIGKILL");
  }
}
