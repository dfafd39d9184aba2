/**
 * What the operator's peak RSS is made of: a sampler that reads the process's RSS
 * every second and, at each new high, its memory split (/proc/<pid>/smaps_rollup: file
 * pages and anonymous memory) and V8's figures (/metrics: heap spaces, external
 * memory); and a heap snapshot taken on demand (`node --heapsnapshot-signal`).
 */
import { readdir, readFile, stat } from "node:fs/promises";
import { sleep } from "../support/operator-process.js";

/** The process's memory at its highest RSS seen by the sampler, in MiB. */
export interface MemoryAtPeak {
  rssMiB: number;
  /** File-backed resident pages (mostly the Node binary's own code). */
  fileMiB: number | null;
  /** Anonymous resident memory: V8's heap, malloc, buffers. */
  anonymousMiB: number | null;
  heapUsedMiB: number | null;
  heapTotalMiB: number | null;
  externalMiB: number | null;
  /** V8's heap spaces: committed size of each (new, old, code, large_object, ...). */
  heapSpacesTotalMiB: Record<string, number>;
  /** Milliseconds after the sampler started. */
  atMs: number;
}

/** Samples `pid` every `everyMs` until stopped; `peak()` is the sample at the highest RSS. */
export class MemorySampler {
  private best: MemoryAtPeak | undefined;
  private running = true;
  private readonly done: Promise<void>;
  private readonly started = Date.now();

  constructor(
    private readonly pid: number,
    private readonly metrics: () => Promise<string>,
    everyMs = 1000,
  ) {
    this.done = this.loop(everyMs);
  }

  private async loop(everyMs: number): Promise<void> {
    while (this.running) {
      const rss = await rssMiB(this.pid);
      if (rss !== undefined && rss > (this.best?.rssMiB ?? 0)) {
        const sample = await this.sample(rss).catch(() => undefined);
        if (sample) this.best = sample;
      }
      await sleep(everyMs);
    }
  }

  private async sample(rss: number): Promise<MemoryAtPeak> {
    const rollup = await readFile(`/proc/${this.pid}/smaps_rollup`, "utf8").catch(() => "");
    const kb = (field: string) => {
      const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(rollup);
      return m ? mib(Number(m[1]) * 1024) : null;
    };
    const text = await this.metrics();
    const metric = (name: string) => {
      const m = new RegExp(`^${name} (\\S+)`, "m").exec(text);
      return m ? mib(Number(m[1])) : null;
    };
    const spaces: Record<string, number> = {};
    for (const m of text.matchAll(/^nodejs_heap_space_size_total_bytes\{space="(\w+)"\} (\S+)/gm)) {
      if (m[1]) spaces[m[1]] = mib(Number(m[2]));
    }
    const file = kb("Rss") !== null ? (kb("Shared_Clean") ?? 0) + (kb("Private_Clean") ?? 0) : null;
    return {
      rssMiB: rss,
      fileMiB: file === null ? null : round(file),
      anonymousMiB: kb("Anonymous"),
      heapUsedMiB: metric("nodejs_heap_size_used_bytes"),
      heapTotalMiB: metric("nodejs_heap_size_total_bytes"),
      externalMiB: metric("nodejs_external_memory_bytes"),
      heapSpacesTotalMiB: spaces,
      atMs: Date.now() - this.started,
    };
  }

  /** Stops sampling; resolves with the sample at the highest RSS seen. */
  async stop(): Promise<MemoryAtPeak | null> {
    this.running = false;
    await this.done;
    return this.best ?? null;
  }
}

/**
 * Node's options that let {@link takeHeapSnapshot} ask the process for a heap
 * snapshot (SIGUSR2), written to `dir`.
 */
export function heapSnapshotNodeArgs(dir: string): string[] {
  return ["--heapsnapshot-signal=SIGUSR2", `--diagnostic-dir=${dir}`];
}

/**
 * Asks `pid` (started with {@link heapSnapshotNodeArgs}) for a heap snapshot and
 * resolves with its file once written (its size stable for a second), or undefined
 * after `timeoutMs`.
 */
export async function takeHeapSnapshot(
  pid: number,
  dir: string,
  timeoutMs = 300_000,
): Promise<string | undefined> {
  const before = new Set(await readdir(dir).catch(() => []));
  process.kill(pid, "SIGUSR2");
  const deadline = Date.now() + timeoutMs;
  let last = -1;
  while (Date.now() < deadline) {
    await sleep(1000);
    const name = (await readdir(dir).catch(() => [])).find(
      (f) => f.endsWith(".heapsnapshot") && !before.has(f),
    );
    if (!name) continue;
    const size = (await stat(`${dir}/${name}`)).size;
    if (size > 0 && size === last) return `${dir}/${name}`;
    last = size;
  }
  return undefined;
}

/**
 * Used and total V8 heap, in MiB, and the time spent in V8's garbage collection pauses
 * by kind (`nodejs_gc_duration_seconds_sum`: minor, major, incremental; wall-clock
 * seconds, so longer on a loaded machine), from the operator's /metrics text.
 */
export function heapFigures(metrics: string): {
  heapUsedMiB: number | null;
  heapTotalMiB: number | null;
  gcPauseSeconds: Record<string, number>;
} {
  const mib = (name: string) => {
    const m = new RegExp(`^${name} (\\S+)`, "m").exec(metrics);
    return m ? Math.round((Number(m[1]) / 1048576) * 10) / 10 : null;
  };
  const gc: Record<string, number> = {};
  for (const m of metrics.matchAll(/^nodejs_gc_duration_seconds_sum\{kind="(\w+)"\} (\S+)/gm)) {
    if (m[1]) gc[m[1]] = Math.round(Number(m[2]) * 100) / 100;
  }
  return {
    heapUsedMiB: mib("nodejs_heap_size_used_bytes"),
    heapTotalMiB: mib("nodejs_heap_size_total_bytes"),
    gcPauseSeconds: gc,
  };
}

async function rssMiB(pid: number): Promise<number | undefined> {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  return m ? mib(Number(m[1]) * 1024) : undefined;
}

function mib(bytes: number): number {
  return round(bytes / 1048576);
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}
