/**
 * Where the calm tenant's time goes in one window of the fairness scenario
 * (fairness-phase.ts): its create-to-Ready split by the steps its watch shows
 * (ready-tracker.ts, `stages`), and what the machine did meanwhile — each process's CPU
 * (operator, API server, etcd, and this process, which runs the emulator and the
 * watches), the API server's own latency of the PATCHes of NasVolumes and its write
 * rate, the operator's Kubernetes request latency, and this process's event-loop delay.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import type * as k8s from "@kubernetes/client-node";
import { kubeRequest } from "../support/http.js";
import { processStats } from "../support/operator-process.js";
import { samples, sumOf } from "../support/prometheus.js";
import { percentile, type StageTimes } from "./ready-tracker.js";

/** What one window showed; see the module comment. */
export interface WindowFigures {
  /** Calm's p50 of each step (ms): create sent → seen, → claimed, → bound, → Ready. */
  stagesP50Ms: StageTimes;
  windowMs: number;
  /** CPU cores used on average over the window, by process. */
  cores: Record<string, number | null>;
  /** The API server's mean PATCH time of NasVolumes (spec/metadata and status), ms. */
  apiServerPatchMs: number | null;
  /** Write requests per second the API server answered (every group), and of them Events. */
  apiServerWritesPerSecond: number | null;
  eventWritesPerSecond: number | null;
  /** The operator's p50 of PATCH and POST, sent to answered (its histogram), ms. */
  operatorPatchP50Ms: number | null;
  operatorPostP50Ms: number | null;
  /** The p50 of calm's service calls, sent to answered, and of their wait for its rate limit, ms. */
  calmServiceCallP50Ms: number | null;
  calmServiceWaitP50Ms: number | null;
  /** The p50 of another client's PATCHes of a ConfigMap (api-pacer.ts), ms. */
  otherClientPatchP50Ms: number | null;
  /** This process's event-loop delay p50 and p99, ms (it serves the emulator). */
  benchLoopDelayMs: { p50: number; p99: number };
  /** The operator's event-loop delay over the window (its `nodejs_eventloop_lag_*`), ms. */
  operatorLoopDelayMs: { p50: number; p99: number; max: number } | null;
  /** The operator's garbage collection over the window, ms by kind (its `nodejs_gc_duration_seconds`). */
  operatorGcMs: Record<string, number> | null;
  /** Cores busy on the whole machine (/proc/stat), and of them outside the processes above. */
  machineCores: number | null;
  otherCores: number | null;
}

interface Snapshot {
  at: number;
  cpu: Record<string, number | undefined>;
  api: string;
  op: string;
}

const WRITE_VERBS = ["POST", "PUT", "PATCH", "APPLY", "DELETE"];

/** Measures one window: `start()` before calm's batch, `stop(stages)` once it is Ready. */
export class WindowProbe {
  private readonly loop = monitorEventLoopDelay({ resolution: 10 });
  private before: Snapshot | undefined;

  constructor(
    private readonly kc: k8s.KubeConfig,
    private readonly pids: Record<string, number | undefined>,
    private readonly operatorMetrics: () => Promise<string>,
    private readonly pacer?: ApiPacer,
    /** The calm tenant's connection (its name, as in the `connection` label). */
    private readonly calm = "fair-calm",
  ) {}

  private async snapshot(): Promise<Snapshot> {
    const cpu: Record<string, number | undefined> = { machine: await machineBusySeconds() };
    for (const [name, pid] of Object.entries(this.pids)) {
      cpu[name] = pid === undefined ? undefined : (await processStats(pid))?.cpuSeconds;
    }
    const own = process.cpuUsage();
    cpu.bench = (own.user + own.system) / 1e6;
    const api = await kubeRequest(this.kc, "GET", "/metrics", { accept: "text/plain" })
      .then((r) => (r.status === 200 ? r.body : ""))
      .catch(() => "");
    const op = await this.operatorMetrics().catch(() => "");
    return { at: Date.now(), cpu, api, op };
  }

  async start(): Promise<void> {
    this.before = await this.snapshot();
    this.loop.reset();
    this.loop.enable();
  }

  async stop(stages: readonly StageTimes[]): Promise<WindowFigures> {
    this.loop.disable();
    const after = await this.snapshot();
    const before = this.before as Snapshot;
    const seconds = Math.max(0.001, (after.at - before.at) / 1000);
    const cores: Record<string, number | null> = {};
    for (const [name, end] of Object.entries(after.cpu)) {
      const start = before.cpu[name];
      cores[name] =
        end === undefined || start === undefined ? null : round2((end - start) / seconds);
    }
    const machineCores = cores.machine ?? null;
    delete cores.machine;
    const ours = Object.values(cores).reduce<number>((a, c) => a + (c ?? 0), 0);
    const lag = (q: string) => sumOf(after.op, `nodejs_eventloop_lag_${q}_seconds`) * 1000;
    const apiDelta = (name: string, where: (l: Record<string, string>) => boolean) =>
      deltaOf(before.api, after.api, name, where);
    const patch = (l: Record<string, string>) => l.verb === "PATCH" && l.resource === "nasvolumes";
    const patchCount = apiDelta("apiserver_request_duration_seconds_count", patch);
    const patchSum = apiDelta("apiserver_request_duration_seconds_sum", patch);
    const writes = apiDelta("apiserver_request_total", (l) => WRITE_VERBS.includes(l.verb ?? ""));
    const events = apiDelta(
      "apiserver_request_total",
      (l) => l.verb === "POST" && l.resource === "events",
    );
    const p50 = (name: string, where: (l: Record<string, string>) => boolean) =>
      round1(histogramP50(before.op, after.op, name, where) * 1000);
    const rest = (verb: string) =>
      p50("rest_client_request_duration_seconds", (l) => l.verb === verb);
    const calmCalls = (l: Record<string, string>) => l.connection?.includes(this.calm) ?? false;
    const stage = (k: keyof StageTimes) =>
      Math.round(
        percentile(
          stages.map((s) => s[k]),
          50,
        ),
      );
    return {
      stagesP50Ms: {
        created: stage("created"),
        claimed: stage("claimed"),
        bound: stage("bound"),
        ready: stage("ready"),
      },
      windowMs: after.at - before.at,
      cores,
      apiServerPatchMs: after.api && patchCount > 0 ? round1((patchSum / patchCount) * 1000) : null,
      apiServerWritesPerSecond: after.api ? round1(writes / seconds) : null,
      eventWritesPerSecond: after.api ? round1(events / seconds) : null,
      operatorPatchP50Ms: after.op ? nullIfNaN(rest("PATCH")) : null,
      operatorPostP50Ms: after.op ? nullIfNaN(rest("POST")) : null,
      calmServiceCallP50Ms: after.op
        ? nullIfNaN(p50("aidc_service_request_duration_seconds", calmCalls))
        : null,
      calmServiceWaitP50Ms: after.op
        ? nullIfNaN(p50("aidc_service_rate_limit_wait_seconds", calmCalls))
        : null,
      otherClientPatchP50Ms: this.pacer ? this.pacer.p50Between(before.at, after.at) : null,
      benchLoopDelayMs: {
        p50: round1(this.loop.percentile(50) / 1e6),
        p99: round1(this.loop.percentile(99) / 1e6),
      },
      // prom-client resets its event-loop histogram at each scrape: this is the window's.
      operatorLoopDelayMs: after.op
        ? { p50: round1(lag("p50")), p99: round1(lag("p99")), max: round1(lag("max")) }
        : null,
      operatorGcMs: after.op ? gcMs(before.op, after.op) : null,
      machineCores,
      otherCores: machineCores === null ? null : round2(Math.max(0, machineCores - ours)),
    };
  }
}

/**
 * The API server's latency as another client sees it: api-pacer.ts in a process of its
 * own, PATCHing a ConfigMap of `namespace` every 50 ms; `stop()` ends it.
 */
export class ApiPacer {
  private readonly child: ChildProcess;
  private readonly answers: { at: number; ms: number }[] = [];

  constructor(kubeconfig: string, namespace: string) {
    const root = resolve(import.meta.dirname, "../..");
    const tsx = resolve(root, "node_modules/tsx/dist/cli.mjs");
    this.child = spawn(
      process.execPath,
      [tsx, resolve(root, "test/bench/api-pacer.ts"), kubeconfig, namespace],
      { stdio: ["ignore", "pipe", "ignore"] },
    );
    let rest = "";
    this.child.stdout?.on("data", (chunk: Buffer) => {
      const lines = (rest + chunk.toString()).split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) {
        const [at, ms] = line.split(" ").map(Number);
        if (at !== undefined && ms !== undefined) this.answers.push({ at, ms });
      }
    });
  }

  /**
   * Resolves at its first answer (or after `timeoutMs`), so that its start-up (tsx, the
   * client library) is over before a window is measured.
   */
  async ready(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.answers.length === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** The p50 latency (ms) of the answers between `from` and `to` (epoch ms); null if none. */
  p50Between(from: number, to: number): number | null {
    const ms = this.answers.filter((a) => a.at >= from && a.at <= to).map((a) => a.ms);
    return ms.length === 0 ? null : round1(percentile(ms, 50));
  }

  stop(): void {
    this.child.kill();
  }
}

/** Seconds of CPU the whole machine spent busy (all cores), from /proc/stat. */
async function machineBusySeconds(): Promise<number | undefined> {
  const stat = await readFile("/proc/stat", "utf8").catch(() => "");
  const cpu = /^cpu\s+(.*)$/m.exec(stat)?.[1]?.split(/\s+/).map(Number);
  if (!cpu || cpu.length < 5) return undefined;
  // user nice system idle iowait irq softirq steal: busy is all but idle and iowait.
  const busy = cpu.slice(0, 8).reduce((a, v, i) => (i === 3 || i === 4 ? a : a + v), 0);
  return busy / 100;
}

/** Milliseconds of garbage collection between two scrapes, by kind (minor, major, …). */
function gcMs(before: string, after: string): Record<string, number> {
  const kinds = new Set(samples(after, "nodejs_gc_duration_seconds_sum").map((s) => s.labels.kind));
  const out: Record<string, number> = {};
  for (const kind of kinds) {
    if (kind === undefined) continue;
    const where = (l: Record<string, string>) => l.kind === kind;
    out[kind] = round1(deltaOf(before, after, "nodejs_gc_duration_seconds_sum", where) * 1000);
  }
  return out;
}

function deltaOf(
  before: string,
  after: string,
  name: string,
  where: (labels: Record<string, string>) => boolean,
): number {
  const sum = (text: string) =>
    samples(text, name)
      .filter((s) => where(s.labels))
      .reduce((acc, s) => acc + s.value, 0);
  return sum(after) - sum(before);
}

/**
 * The p50 (seconds) of the operator's `rest_client_request_duration_seconds` for `verb`
 * between two scrapes, interpolated linearly inside its bucket; NaN without requests.
 */
export function histogramP50(
  before: string,
  after: string,
  name: string,
  where: (labels: Record<string, string>) => boolean,
): number {
  const buckets = (text: string) => {
    const out = new Map<number, number>();
    for (const s of samples(text, `${name}_bucket`)) {
      if (!where(s.labels)) continue;
      const le = s.labels.le === "+Inf" ? Number.POSITIVE_INFINITY : Number(s.labels.le);
      out.set(le, (out.get(le) ?? 0) + s.value);
    }
    return out;
  };
  const a = buckets(after);
  const b = buckets(before);
  const bounds = [...a.keys()].sort((x, y) => x - y);
  const total = (a.get(Number.POSITIVE_INFINITY) ?? 0) - (b.get(Number.POSITIVE_INFINITY) ?? 0);
  if (total <= 0) return Number.NaN;
  let lower = 0;
  let below = 0;
  for (const le of bounds) {
    const count = (a.get(le) ?? 0) - (b.get(le) ?? 0);
    if (count >= total / 2) {
      if (!Number.isFinite(le)) return lower;
      return lower + ((le - lower) * (total / 2 - below)) / Math.max(1, count - below);
    }
    lower = le;
    below = count;
  }
  return Number.NaN;
}

const round1 = (x: number) => Math.round(x * 10) / 10;
const round2 = (x: number) => Math.round(x * 100) / 100;
const nullIfNaN = (x: number) => (Number.isNaN(x) ? null : x);
