/**
 * `aidc-operator emulator` as a person runs it: a child process that prints its URL,
 * serves the API with the key from AIDC_API_KEY, and stops on SIGTERM.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const KEY = "cli-test-key-0123456789abcdef";
let child: ChildProcess | undefined;

/**
 * Starts the CLI as one Node process with tsx as its loader (`node --import tsx`, as
 * operatorEntry of test/support/operator-process.ts does): tsx's own CLI would run it
 * in a child and relay SIGTERM, and when the child does not acknowledge within tsx's
 * 30 ms (a loaded machine) it SIGKILLs it and exits 143, whatever the emulator does on
 * SIGTERM.
 */
function run(
  args: string[],
  env: Record<string, string> = {},
  entry = "src/cli/repo-main.ts",
): ChildProcess {
  const { AIDC_API_KEY: _, ...rest } = process.env;
  child = spawn(process.execPath, ["--import", "tsx", entry, "emulator", ...args], {
    cwd: root,
    env: { ...rest, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return child;
}

function output(p: ChildProcess): { stdout: () => string; stderr: () => string } {
  let out = "";
  let err = "";
  p.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  p.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
  });
  return { stdout: () => out, stderr: () => err };
}

const exited = (p: ChildProcess) =>
  new Promise<number | null>((r) => {
    if (p.exitCode !== null) r(p.exitCode);
    else p.once("exit", (code) => r(code));
  });

afterEach(() => {
  if (child && child.exitCode === null) child.kill("SIGKILL");
  child = undefined;
});

describe("aidc-operator emulator", () => {
  it("serves the API with the key from AIDC_API_KEY, never prints the key, and stops on SIGTERM", async () => {
    const p = run(["--port", "0", "--subscription-delay-ms", "0"], { AIDC_API_KEY: KEY });
    const out = output(p);
    const deadline = Date.now() + 15_000;
    while (!/http:\/\/\S+/.test(out.stdout()) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const url = /http:\/\/127\.0\.0\.1:\d+/.exec(out.stdout())?.[0];
    expect(url, out.stderr()).toBeDefined();
    const res = await fetch(`${url}/v1/product/list-for-training-task`, {
      headers: { Authorization: `Bearer ${KEY}` },
    });
    expect((await res.json()) as { status: number }).toMatchObject({ status: 200 });
    p.kill("SIGTERM");
    expect(await exited(p)).toBe(0);
    expect(out.stdout() + out.stderr()).not.toContain(KEY);
  });

  it("serves under --base-path, with --unknown-id-status, --page-size-cap and --id-tag", async () => {
    const p = run(
      [
        "--port",
        "0",
        "--base-path",
        "/api/gw",
        "--unknown-id-status",
        "500",
        "--page-size-cap",
        "2",
        "--id-tag",
        "run7",
      ],
      { AIDC_API_KEY: KEY },
    );
    const out = output(p);
    const deadline = Date.now() + 15_000;
    while (!/http:\/\/\S+/.test(out.stdout()) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const url = /http:\/\/127\.0\.0\.1:\d+\/api\/gw/.exec(out.stdout())?.[0];
    expect(url, out.stdout() + out.stderr()).toBeDefined();
    const get = async (path: string) =>
      (await (
        await fetch(`${url}${path}`, { headers: { Authorization: `Bearer ${KEY}` } })
      ).json()) as { status: number; data: { pageSize?: number } };
    expect(await get("/v1/nasStorage/instance/nas-x/detail")).toMatchObject({ status: 500 });
    expect(await get("/v1/nasStorage/instance/list?pageSize=50")).toMatchObject({
      status: 200,
      data: { pageSize: 2 },
    });
    const seeded = await fetch(`${url}/_admin/seed`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ nas: [{}] }),
    });
    expect(await seeded.json()).toMatchObject({ nas: ["nas-run7-000001"] });
    p.kill("SIGTERM");
    expect(await exited(p)).toBe(0);
  });

  it("takes each kind's settings as flags (--volume-transition-ms) and refuses a bad one", async () => {
    const p = run(
      ["--port", "0", "--volume-transition-ms", "0", "--file-storage-delay-ms", "250"],
      { AIDC_API_KEY: KEY },
    );
    const out = output(p);
    const deadline = Date.now() + 15_000;
    while (!/http:\/\/\S+/.test(out.stdout()) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const url = /http:\/\/127\.0\.0\.1:\d+/.exec(out.stdout())?.[0];
    expect(url, out.stderr()).toBeDefined();
    const config = await (
      await fetch(`${url}/_admin/config`, { headers: { Authorization: `Bearer ${KEY}` } })
    ).json();
    expect(config).toMatchObject({ volumeTransitionMs: 0, fileStorageDelayMs: 250 });
    p.kill("SIGTERM");
    expect(await exited(p)).toBe(0);
    const bad = run(["--port", "0", "--volume-transition-ms", "-1"], { AIDC_API_KEY: KEY });
    const badOut = output(bad);
    expect(await exited(bad)).toBe(1);
    expect(badOut.stderr()).toMatch(/--volume-transition-ms must be a non-negative integer/);
  });

  it("refuses to start without an API key", async () => {
    const p = run(["--port", "0"]);
    const out = output(p);
    expect(await exited(p)).toBe(1);
    expect(out.stderr()).toMatch(/an API key is required/);
  });
});

describe("aidc-operator emulator in the production build (src/cli/main.ts, the image's entry)", () => {
  it("starts nothing and says how to run it from a checkout of the repository", async () => {
    const p = run(["--port", "0"], { AIDC_API_KEY: KEY }, "src/cli/main.ts");
    const out = output(p);
    expect(await exited(p)).toBe(1);
    expect(out.stdout()).toBe("");
    expect(out.stderr()).toMatch(
      /emulator is a development tool, not part of this build .* run `npm run emulator` from a checkout of the repository/,
    );
  });
});
