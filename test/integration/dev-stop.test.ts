import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { repoRoot } from "../../src/controlplane/binaries.js";
import { eventually } from "../support/kube.js";

/**
 * `npm run dev` and `npm run controlplane` (the LocalControlPlane of the integration
 * run's global setup) stopped as a terminal stops them: Ctrl-C is SIGINT to the whole
 * foreground process group, here npm and the command's Node process; the servers
 * (etcd, kube-apiserver, kube-controller-manager, MinIO) have sessions of their own
 * (src/controlplane/processes.ts) and the command stops them itself, after the operator,
 * whose last writes then find the API server up: no warning, exit code 0, no process
 * left. A SIGKILL of the command's Node process leaves none of its servers running.
 * Ctrl-C during start-up stops what has started the same way and removes the
 * temporary directories it made.
 */

/** A command started in a process group of its own, with its output gathered. */
interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

let started: Started | undefined;
// A run stopped before afterEach still ends the command's group.
process.on("exit", () => killGroup(started));

function killGroup(s: Started | undefined): void {
  if (s?.child.exitCode !== null || !s.child.pid) return;
  try {
    process.kill(-s.child.pid, "SIGKILL");
  } catch {
    // already gone
  }
}

/** The processes to kill and directories to remove after a case. */
let leftovers: { procs: Proc[]; dirs: string[] } = { procs: [], dirs: [] };

afterEach(async () => {
  killGroup(started);
  for (const p of await stillRunning(leftovers.procs)) process.kill(p.pid, "SIGKILL");
  // A server killed a moment ago may still write into its directory (ENOTEMPTY).
  for (const dir of leftovers.dirs)
    await rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  started = undefined;
  leftovers = { procs: [], dirs: [] };
});

function startInGroup(
  script: string,
  args: string[] = [],
  env: Record<string, string> = {},
): Started {
  // The integration run's log level is not the command's default one.
  const { AIDC_LOG_LEVEL: _, ...inherited } = process.env;
  const child = spawn("npm", ["run", script, ...(args.length ? ["--", ...args] : [])], {
    cwd: repoRoot,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...inherited, ...env },
  });
  let output = "";
  child.stdout?.on("data", (d) => {
    output += d;
  });
  child.stderr?.on("data", (d) => {
    output += d;
  });
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  started = { child, output: () => output, exited };
  return started;
}

/** A process: its pid and command line (to tell it from a later one given the same pid). */
interface Proc {
  pid: number;
  cmdline: string;
}

async function cmdlineOf(pid: number): Promise<string | undefined> {
  return readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => undefined);
}

/** The parent of `pid` (the 4th field of /proc/<pid>/stat; comm may hold spaces). */
async function ppidOf(pid: number): Promise<number | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined);
  return stat === undefined
    ? undefined
    : Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

/** Every descendant of `root`. */
async function descendants(root: number): Promise<Proc[]> {
  const parent = new Map<number, number | undefined>();
  for (const entry of await readdir("/proc")) {
    if (/^\d+$/.test(entry)) parent.set(Number(entry), await ppidOf(Number(entry)));
  }
  const found: Proc[] = [];
  for (const pid of parent.keys()) {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) {
      if (p !== root) continue;
      const cmdline = await cmdlineOf(pid);
      if (cmdline !== undefined) found.push({ pid, cmdline });
      break;
    }
  }
  return found;
}

async function stillRunning(procs: Proc[]): Promise<Proc[]> {
  const running: Proc[] = [];
  for (const p of procs) if ((await cmdlineOf(p.pid)) === p.cmdline) running.push(p);
  return running;
}

/** Those of `procs` still running after `ms` (at most). */
async function runningAfter(procs: Proc[], ms: number): Promise<Proc[]> {
  let left = procs;
  await eventually(async () => {
    left = await stillRunning(procs);
    return left.length === 0;
  }, ms).catch(() => undefined);
  return left;
}

/** SIGKILL to the Node process running the command: the servers' parent (npm's child). */
async function killNode(s: Started, procs: Proc[]): Promise<void> {
  const node = await ppidOf(servers(procs)[0]?.pid as number);
  process.kill(node as number, "SIGKILL");
  await s.exited;
}

const name = (p: Proc) => `${p.pid} ${p.cmdline.split("\0")[0]?.split("/").pop()}`;

/** Waits for `line` in the output; resolves with the command's processes then. */
async function untilPrinted(s: Started, line: string): Promise<Proc[]> {
  await eventually(async () => s.output().includes(line) || s.child.exitCode !== null, 180_000);
  expect(s.output(), "the command's output").toContain(line);
  const procs = await descendants(s.child.pid as number);
  const kubeconfig = /export KUBECONFIG=(\S+)/.exec(s.output())?.[1];
  leftovers = {
    procs,
    dirs: [
      ...(kubeconfig ? [dirname(kubeconfig)] : []),
      ...procs.flatMap((p) => /\0(\/[^\0]*\/aidc-s3-[^\0]+)\0/.exec(p.cmdline)?.[1] ?? []),
    ],
  };
  return procs;
}

/**
 * Starts `npm run <script>` with a temporary directory of its own (TMPDIR) and sends
 * SIGINT to its group, as a terminal's Ctrl-C, as soon as it prints `at` (a string) or
 * runs a process whose command line matches it; resolves once it has exited, with the
 * directories it left there (the control plane's, MinIO's data) and the processes
 * still running with one of them.
 */
async function interruptAt(script: string, args: string[], at: string | RegExp) {
  const tmp = await mkdtemp(join(tmpdir(), "dev-stop-"));
  leftovers.dirs.push(tmp);
  const s = startInGroup(script, args, { TMPDIR: tmp });
  const reached = async () =>
    typeof at === "string"
      ? s.output().includes(at)
      : (await descendants(s.child.pid as number)).some((p) => at.test(p.cmdline));
  const reachedAt = await eventually(
    async () => ((await reached()) ? "reached" : s.child.exitCode !== null && "exited"),
    60_000,
    20,
  );
  expect(reachedAt, `${at} before it exited: ${s.output()}`).toBe("reached");
  process.kill(-(s.child.pid as number), "SIGINT");
  const code = await s.exited;
  const dirs = (await readdir(tmp)).filter((n) => n.startsWith("aidc-"));
  const procs: Proc[] = [];
  for (const entry of await readdir("/proc")) {
    const cmdline = /^\d+$/.test(entry) ? await cmdlineOf(Number(entry)) : undefined;
    if (cmdline?.includes(tmp)) procs.push({ pid: Number(entry), cmdline });
  }
  leftovers.procs = await runningAfter(procs, 2_000);
  return { code, output: s.output(), dirs, procs: leftovers.procs.map(name) };
}

/** The servers among `procs`: etcd, kube-apiserver, kube-controller-manager, MinIO. */
function servers(procs: Proc[]): Proc[] {
  return procs.filter((p) => /(etcd|kube-[a-z-]+|minio)\0/.test(p.cmdline));
}

describe("stopping the local commands", () => {
  it("npm run dev: Ctrl-C while the samples settle stops all quietly, the operator before the API server", async () => {
    // At debug: an Event write that finds no API server is logged at that level.
    const s = startInGroup("dev", [], { AIDC_LOG_LEVEL: "debug" });
    const procs = await untilPrinted(s, "Press Ctrl-C to stop.");
    expect(servers(procs).map(name).join("\n")).toMatch(/etcd[\s\S]*minio/);
    // While the samples' Events still repeat: the operator writes their series as it stops.
    await new Promise((r) => setTimeout(r, 2000));
    process.kill(-(s.child.pid as number), "SIGINT");
    expect(await s.exited).toBe(0);
    const lines = s.output().split("\n");
    const stopping = lines.lastIndexOf("stopping...");
    expect(stopping, "the command's output").toBeGreaterThan(0);
    // After it, only the operator's own lines, none of them a failed write.
    const quiet = (l: string) =>
      l === "" || (/^\{"level":"(debug|info)"/.test(l) && !l.includes("could not"));
    expect(lines.slice(stopping + 1).filter((l) => !quiet(l))).toEqual([]);
    expect(lines.filter((l) => /"level":"(warn|error|fatal)"/.test(l))).toEqual([]);
    expect((await stillRunning(procs)).map(name)).toEqual([]);
  }, 240_000);

  it("npm run dev: a SIGKILL of its Node process leaves no server running", async () => {
    const s = startInGroup("dev", ["--no-samples"]);
    const procs = await untilPrinted(s, "Press Ctrl-C to stop.");
    await killNode(s, procs);
    expect((await runningAfter(servers(procs), 5_000)).map(name)).toEqual([]);
  }, 240_000);

  it("npm run controlplane: Ctrl-C stops it with exit code 0; a SIGKILL leaves no server running", async () => {
    const s = startInGroup("controlplane");
    const procs = await untilPrinted(s, "Press Ctrl-C to stop.");
    expect(servers(procs)).toHaveLength(3);
    process.kill(-(s.child.pid as number), "SIGINT");
    expect(await s.exited).toBe(0);
    expect((await stillRunning(procs)).map(name)).toEqual([]);

    const k = startInGroup("controlplane");
    const killed = await untilPrinted(k, "Press Ctrl-C to stop.");
    await killNode(k, killed);
    expect((await runningAfter(servers(killed), 5_000)).map(name)).toEqual([]);
  }, 240_000);

  it.each([
    // Its first line: the control plane starts.
    ["dev", [], "starting the local control plane"],
    // Waiting for the API server to be ready.
    ["controlplane", [], /kube-apiserver\0/],
    // MinIO starts, the control plane and the emulator run.
    ["dev", ["--no-samples"], "service emulator at"],
    // The operator starts while the samples are applied.
    ["dev", [], "operator running"],
  ] as const)(
    "npm run %s %j: Ctrl-C at %s stops what started, leaves nothing, exit code 0",
    async (script, args, at) => {
      const r = await interruptAt(script, [...args], at);
      const trace = /^\s+at .*$/m.exec(r.output)?.[0] ?? null;
      const said = r.output.includes("stopped during start-up");
      expect({ code: r.code, said, trace, dirs: r.dirs, procs: r.procs }).toEqual({
        code: 0,
        said: true,
        trace: null,
        dirs: [],
        procs: [],
      });
    },
    120_000,
  );
});
