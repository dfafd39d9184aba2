/**
 * The child processes of a local control plane: the loopback ports they listen on, each
 * started with a log file, awaited, stopped.
 */
import { type ChildProcess, type SpawnOptions, spawn, spawnSync } from "node:child_process";
import { createWriteStream } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let setprivWorks: boolean | undefined;

/**
 * Starts `bin` as a server this process stops itself (the control plane's, MinIO), in a
 * session of its own: a terminal's Ctrl-C (SIGINT to the foreground process group)
 * reaches only this process, which stops its servers in its own order (`npm run dev`:
 * the operator before the API server it writes to). So that the server still ends with
 * this process, even one killed by SIGKILL, it runs under util-linux's `setpriv
 * --pdeathsig KILL`: the kernel kills it when the thread that started it ends (Node
 * cannot set PR_SET_PDEATHSIG itself; setpriv sets it and execs the server, leaving no
 * process between). Without setpriv (not Linux), it stays in this process's group.
 */
export function spawnServer(bin: string, args: string[], options: SpawnOptions): ChildProcess {
  setprivWorks ??= spawnSync("setpriv", ["--pdeathsig", "KILL", "--", "true"]).status === 0;
  if (!setprivWorks) return spawn(bin, args, options);
  return spawn("setpriv", ["--pdeathsig", "KILL", "--", bin, ...args], {
    ...options,
    detached: true,
  });
}

/** Loopback port that is free right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === "object" && addr ? resolvePort(addr.port) : reject()));
    });
  });
}

/** Starts `bin` ({@link spawnServer}) with its stdout and stderr appended to `<dir>/<name>.log`. */
export function spawnLogged(dir: string, bin: string, name: string, args: string[]): ChildProcess {
  const log = createWriteStream(join(dir, `${name}.log`), { flags: "a" });
  const child = spawnServer(bin, args, { stdio: ["ignore", "pipe", "pipe"] });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  return child;
}

/** How long {@link waitFor} waits, and the signal that ends a start-up sooner. */
export interface WaitLimits {
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * Waits until `ready` answers true (an error counts as not yet), at most `timeoutMs`;
 * fails at once with the log's tail when `child` exits, and with the signal's reason
 * when it is aborted.
 */
export async function waitFor(
  dir: string,
  limits: WaitLimits,
  name: string,
  child: ChildProcess | undefined,
  ready: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + limits.timeoutMs;
  while (Date.now() < deadline) {
    limits.signal?.throwIfAborted();
    if (child && child.exitCode !== null) {
      throw new Error(`${name} exited with code ${child.exitCode}: ${await logTail(dir, name)}`);
    }
    try {
      if (await ready()) return;
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  throw new Error(`${name} not ready in time: ${await logTail(dir, name)}`);
}

async function logTail(dir: string, name: string): Promise<string> {
  try {
    const text = await readFile(join(dir, `${name}.log`), "utf8");
    return text.split("\n").slice(-15).join("\n");
  } catch {
    return "(no log)";
  }
}

/** SIGTERM, SIGKILL after `graceMs`, and waits for the exit (nothing when not running). */
export async function stopProcess(
  child: ChildProcess | undefined,
  graceMs = 10_000,
): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}
