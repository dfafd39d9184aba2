import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "./binaries.js";

const statOf = (pid: number) => readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined);

/** Process group of `pid` (the 5th field of /proc/<pid>/stat; comm may hold spaces). */
async function pgidOf(pid: number): Promise<number> {
  const stat = (await statOf(pid)) ?? "";
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
}

/**
 * A Node process (in a group of its own, as a terminal's command is) that starts
 * `sleep 600` with spawnServer, prints its pid, and outlives a SIGINT (as `npm run dev`
 * does, to stop its children itself).
 */
async function parentWithServer(): Promise<{ parent: number; server: number }> {
  const code = `import(${JSON.stringify(join(repoRoot, "src/controlplane/processes.ts"))}).then((m) => {
    const child = m.spawnServer("sleep", ["600"], { stdio: "ignore" });
    console.log(child.pid);
  });
  process.on("SIGINT", () => {});
  setInterval(() => {}, 1000);`;
  const parent = spawn(process.execPath, ["--import", "tsx", "-e", code], {
    cwd: repoRoot,
    detached: true,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const server = await new Promise<number>((resolvePid, reject) => {
    parent.stdout?.once("data", (d) => resolvePid(Number(String(d).trim())));
    parent.once("exit", (code) => reject(new Error(`parent exited with ${code}`)));
  });
  return { parent: parent.pid as number, server };
}

async function gone(pid: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    const stat = await statOf(pid);
    // Gone, or a zombie not yet reaped by init.
    if (stat === undefined || stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

describe("spawnServer", () => {
  it("starts the server outside its parent's process group: a Ctrl-C to that group misses it", async () => {
    const { parent, server } = await parentWithServer();
    try {
      expect(await pgidOf(parent)).toBe(parent);
      expect(await pgidOf(server)).toBe(server);
      process.kill(-parent, "SIGINT");
      // sleep would end at a SIGINT.
      expect(await gone(server, 500)).toBe(false);
    } finally {
      process.kill(-parent, "SIGKILL");
    }
    expect(await gone(server, 3000)).toBe(true);
  });

  it("ends the server when its parent is killed with SIGKILL", async () => {
    const { parent, server } = await parentWithServer();
    try {
      expect(await gone(server, 300)).toBe(false);
      process.kill(parent, "SIGKILL");
      expect(await gone(server, 3000)).toBe(true);
    } finally {
      try {
        process.kill(server, "SIGKILL");
      } catch {
        // already gone
      }
    }
  });
});
