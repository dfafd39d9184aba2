/** The child processes of a local control plane: started with a log file each, awaited, stopped. */
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts `bin` with its stdout and stderr appended to `<dir>/<name>.log`. */
export function spawnLogged(dir: string, bin: string, name: string, args: string[]): ChildProcess {
  const log = createWriteStream(join(dir, `${name}.log`), { flags: "a" });
  const child = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  return child;
}

/**
 * Waits until `ready` answers true (an error counts as not yet), at most `timeoutMs`;
 * fails at once with the log's tail when `child` exits.
 */
export async function waitFor(
  dir: string,
  timeoutMs: number,
  name: string,
  child: ChildProcess | undefined,
  ready: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
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
