/**
 * `aidc-operator run` as its own process, for the benchmark, the chaos script and the
 * integration test of the chaos check. The child is `node --import tsx src/cli/main.ts
 * run` (or, with `compiled`, `node dist/bundle/main.js run` as in the image): one process
 * (no tsx wrapper), so its pid is the Node process whose memory and CPU time are
 * measured and which SIGKILL ends.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { appendFileSync } from "node:fs";
import { readdir, readFile, readlink } from "node:fs/promises";
import { join, resolve } from "node:path";
import { BUNDLE_ENTRY } from "../../scripts/bundle-dist.js";

const root = resolve(import.meta.dirname, "../..");

/** Every child started here, so that an abrupt exit of the parent kills them too. */
const live = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});

/** How to start the operator. */
export interface OperatorProcessOptions {
  kubeconfig: string;
  serviceBaseUrl: string;
  /** Passed as AIDC_API_KEY (environment only, as in production). */
  apiKey: string;
  metricsPort: number;
  /** Further AIDC_* settings, e.g. `{ AIDC_WATCH_NAMESPACES: "bench" }`. */
  env?: Record<string, string>;
  /** Every stdout/stderr line of the process is appended here (for the API-key check). */
  logFile?: string;
  /** Options for Node itself, before the script, e.g. `["--max-old-space-size=256"]`. */
  nodeArgs?: string[];
  /** Run the compiled bundle, `dist/bundle/main.js` (build it first: {@link buildOperator}). */
  compiled?: boolean;
  /** With `compiled`: another build's bundle entry to run instead (an absolute path). */
  compiledMain?: string;
}

/**
 * Node's own options of the image's ENTRYPOINT (the Dockerfile test holds the two
 * together): V8's young generation capped at 2 MiB per semi-space (it would grow to 16
 * while modules load and stay there), and the old generation's next full collection at
 * 20% growth over what the last one kept (V8 lets it grow up to 4× under allocation).
 * Measured three ways at once at 1,000 objects against `--optimize-for-size`: RSS at
 * readiness 85 MiB, peak 118 MiB, 10 ms CPU per object (docs/performance.md, "The
 * image's Node options").
 */
export const IMAGE_NODE_ARGS: readonly string[] = [
  "--max-semi-space-size=2",
  "--heap-growing-percent=20",
];

/** Node's arguments that start the CLI: a compiled main.js, else src/ through tsx. */
export function operatorEntry(compiledMain?: string): string[] {
  return compiledMain ? [compiledMain] : ["--import", "tsx", "src/cli/main.ts"];
}

/**
 * Builds the operator as the image does (`npm run build`: `tsc -p tsconfig.build.json`,
 * then the bundle of scripts/bundle-dist.ts), into dist/ unless `outDir` says
 * otherwise; resolves with the first failing step's exit code (else 0) and what the
 * steps printed.
 */
export async function buildOperator(
  outDir?: string,
): Promise<{ exitCode: number | null; output: string }> {
  const tsc = [
    resolve(root, "node_modules/typescript/bin/tsc"),
    "-p",
    "tsconfig.build.json",
    ...(outDir ? ["--outDir", outDir] : []),
  ];
  const bundle = [
    resolve(root, "node_modules/tsx/dist/cli.mjs"),
    "scripts/bundle-dist.ts",
    ...(outDir ? [outDir] : []),
  ];
  let output = "";
  for (const args of [tsc, bundle]) {
    const child = spawn(process.execPath, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    const collect = (chunk: Buffer) => {
      output += chunk;
    };
    child.stdout?.on("data", collect);
    child.stderr?.on("data", collect);
    const exitCode = await new Promise<number | null>((done) => child.once("exit", done));
    if (exitCode !== 0) return { exitCode, output };
  }
  return { exitCode: 0, output };
}

/** Peak memory and CPU time of a process, read from /proc. */
export interface ProcessStats {
  /** VmHWM: peak resident set size, in MiB. */
  peakRssMiB: number;
  /** VmRSS: resident set size now, in MiB. */
  rssMiB: number;
  /** utime + stime, in seconds. */
  cpuSeconds: number;
}

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux). */
const USER_HZ = 100;

/** Reads VmHWM and utime+stime of `pid`; undefined when the process is gone. */
export async function processStats(pid: number): Promise<ProcessStats | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    const kb = (field: string) =>
      Number(new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, "m").exec(status)?.[1] ?? Number.NaN);
    // Fields after the ")" that closes the command name: state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    return {
      peakRssMiB: round(kb("VmHWM") / 1024),
      rssMiB: round(kb("VmRSS") / 1024),
      cpuSeconds: round(ticks / USER_HZ),
    };
  } catch {
    return undefined;
  }
}

/**
 * TCP connections of `pid` that are established to `port` (any address): the inodes
 * of its socket file descriptors matched against /proc/<pid>/net/tcp and tcp6.
 * Undefined when the process is gone.
 */
export async function connectionsTo(pid: number, port: number): Promise<number | undefined> {
  try {
    const inodes = new Set<string>();
    for (const fd of await readdir(`/proc/${pid}/fd`)) {
      const link = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => "");
      const m = /^socket:\[(\d+)\]$/.exec(link);
      if (m?.[1]) inodes.add(m[1]);
    }
    let count = 0;
    for (const table of ["tcp", "tcp6"]) {
      const text = await readFile(`/proc/${pid}/net/${table}`, "utf8").catch(() => "");
      for (const line of text.split("\n").slice(1)) {
        const f = line.trim().split(/\s+/);
        const remotePort = Number.parseInt(f[2]?.split(":")[1] ?? "", 16);
        // st 01 = ESTABLISHED; field 9 is the socket's inode.
        if (remotePort === port && f[3] === "01" && inodes.has(f[9] ?? "")) count++;
      }
    }
    return count;
  } catch {
    return undefined;
  }
}

/** A running operator process. */
export interface OperatorProcess {
  child: ChildProcess;
  pid: number;
  metricsUrl: string;
  /** Resolves with the exit code (or the signal name) when the process ends. */
  exited: Promise<number | string>;
  /** Resolves once /readyz answers 200 (caches synced, controllers running). */
  waitReady(timeoutMs?: number): Promise<void>;
  /** The /metrics text. */
  metrics(): Promise<string>;
  /** SIGKILL, then waits for the exit. */
  kill(): Promise<void>;
  /** SIGTERM (graceful), SIGKILL after `graceMs`, then waits for the exit. */
  stop(graceMs?: number): Promise<void>;
}

/** Starts `aidc-operator run` against the given control plane and service. */
export function startOperatorProcess(options: OperatorProcessOptions): OperatorProcess {
  const child = spawn(
    process.execPath,
    [
      ...(options.nodeArgs ?? []),
      ...operatorEntry(
        options.compiled ? (options.compiledMain ?? join("dist", BUNDLE_ENTRY)) : undefined,
      ),
      "run",
      "--kubeconfig",
      options.kubeconfig,
    ],
    {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "",
        AIDC_API_KEY: options.apiKey,
        AIDC_SERVICE_BASE_URL: options.serviceBaseUrl,
        // The emulator speaks plain http.
        AIDC_SERVICE_ALLOW_INSECURE_HTTP: "true",
        AIDC_METRICS_PORT: String(options.metricsPort),
        AIDC_LOG_LEVEL: "info",
        ...options.env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  live.add(child);
  const log = (chunk: Buffer) => {
    if (options.logFile) appendFileSync(options.logFile, chunk);
  };
  child.stdout?.on("data", log);
  child.stderr?.on("data", log);
  const exited = new Promise<number | string>((r) =>
    child.once("exit", (code, signal) => {
      live.delete(child);
      r(code ?? signal ?? "unknown");
    }),
  );
  const metricsUrl = `http://127.0.0.1:${options.metricsPort}`;
  let ended = false;
  void exited.then(() => {
    ended = true;
  });
  return {
    child,
    pid: child.pid ?? -1,
    metricsUrl,
    exited,
    waitReady: async (timeoutMs = 60_000) => {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        if (ended) throw new Error(`the operator exited before it was ready (${await exited})`);
        const ok = await fetch(`${metricsUrl}/readyz`).then(
          (r) => r.status === 200,
          () => false,
        );
        if (ok) return;
        await sleep(200);
      }
      throw new Error(`the operator was not ready within ${timeoutMs} ms`);
    },
    metrics: async () => (await fetch(`${metricsUrl}/metrics`)).text(),
    kill: async () => {
      if (!ended) child.kill("SIGKILL");
      await exited;
    },
    stop: async (graceMs = 25_000) => {
      if (ended) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
