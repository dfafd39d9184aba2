import { execFile, spawn } from "node:child_process";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { HealthServer } from "./health.js";
import { createLogger, logProcessWarnings } from "./logging.js";
import { RuntimeMetrics } from "./metrics.js";

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  return { lines, destination };
}

describe("the operator's logs", () => {
  it("are JSON lines with a level label, the reconcile fields, and secrets redacted", () => {
    const { lines, destination } = capture();
    const log = createLogger({ destination });
    const reconcile = log.child({ controller: "nasvolume", key: "ns/a", reconcileId: "r-1" });
    reconcile.info(
      {
        apiKey: "k1",
        config: { service: { apiKey: "k2" } },
        req: { headers: { authorization: "Bearer k3" } },
        authorization: "Bearer k4",
      },
      "calling the service",
    );
    const line = lines[0] ?? {};
    expect(line).toMatchObject({
      level: "info",
      controller: "nasvolume",
      key: "ns/a",
      reconcileId: "r-1",
    });
    expect(JSON.stringify(line)).not.toMatch(/k1|k2|k3|k4/);
    expect(line.apiKey).toBe("[REDACTED]");
  });
});

describe("the health server", () => {
  it("log a wrapped error's message once: a cause its message already says is not repeated", () => {
    const { lines, destination } = capture();
    const log = createLogger({ destination });
    const refused = new Error("GET /x failed with status 500");
    const wrapped = new Error(`cannot observe the remote resource: ${refused.message}`, {
      cause: refused,
    });
    const silent = new Error("reconcile failed", { cause: new Error("socket hang up") });
    log.warn({ err: wrapped }, "reconcile failed; will retry");
    log.warn({ err: silent }, "reconcile failed; will retry");
    const [first, second] = lines.map((l) => l.err as { message: string; stack: string });
    expect(first?.message).toBe(
      "cannot observe the remote resource: GET /x failed with status 500",
    );
    // A cause the message does not say is kept.
    expect(second?.message).toBe("reconcile failed: socket hang up");
    expect(second?.stack).toContain("caused by: Error: socket hang up");
  });

  it("answers /healthz, lists failing readiness checks on /readyz, and serves metrics", async () => {
    let synced = false;
    const metrics = new RuntimeMetrics({ processMetrics: false });
    // One service call, as a service client's transport records it.
    const calls = metrics.serviceCallMetrics();
    const connection = calls.connection;
    calls.requests.inc({ endpoint: "taskDetail", code: "200", connection });
    calls.duration.observe({ endpoint: "taskDetail", connection }, 0.12);
    calls.rateLimitWait.observe({ priority: "low", connection }, 0.7);
    const server = new HealthServer({
      port: 0,
      host: "127.0.0.1",
      metrics,
      readiness: { "informer-sync": () => (synced ? undefined : "not synced: gizmos") },
    });
    const port = await server.start();
    try {
      const base = `http://127.0.0.1:${port}`;
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      const notReady = await fetch(`${base}/readyz`);
      expect(notReady.status).toBe(503);
      expect(await notReady.text()).toContain("[-]informer-sync: not synced: gizmos");
      synced = true;
      expect((await fetch(`${base}/readyz`)).status).toBe(200);
      const text = await (await fetch(`${base}/metrics`)).text();
      expect(text).toContain(
        'aidc_service_requests_total{endpoint="taskDetail",code="200",connection="_default"} 1',
      );
      expect(text).toContain(
        'aidc_service_request_duration_seconds_bucket{le="0.25",endpoint="taskDetail",connection="_default"} 1',
      );
      expect(text).toContain(
        'aidc_service_rate_limit_wait_seconds_bucket{le="0.5",priority="low",connection="_default"} 0',
      );
      expect(text).toContain(
        'aidc_service_rate_limit_wait_seconds_bucket{le="1",priority="low",connection="_default"} 1',
      );
    } finally {
      await server.stop();
    }
  });
});

describe("the process's warnings", () => {
  it("are lines of the log while routed there (a library's at info, others at warn), Node's own again after", async () => {
    const { lines, destination } = capture();
    const nodes = process.listeners("warning");
    const restore = logProcessWarnings(createLogger({ destination }));
    try {
      expect(process.listeners("warning").filter((l) => nodes.includes(l))).toEqual([]);
      process.emitWarning("SOCKS5 proxy support is experimental", "ExperimentalWarning");
      process.emitWarning("Setting the TLS ServerName to an IP address", {
        type: "DeprecationWarning",
        code: "DEP0123",
      });
      process.emitWarning("11 close listeners added", "MaxListenersExceededWarning");
      // Node emits them on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      restore();
    }
    expect(process.listeners("warning")).toEqual(nodes);
    expect(lines.map(({ level, warning, msg }) => ({ level, warning, msg }))).toEqual([
      {
        level: "info",
        warning: { name: "ExperimentalWarning" },
        msg: "SOCKS5 proxy support is experimental",
      },
      {
        level: "info",
        warning: { name: "DeprecationWarning", code: "DEP0123" },
        msg: "Setting the TLS ServerName to an IP address",
      },
      {
        level: "warn",
        warning: { name: "MaxListenersExceededWarning" },
        msg: "11 close listeners added",
      },
    ]);
  });
});

describe("an error nothing caught", () => {
  /** Runs `crash` in a process whose log has exitOnUncaughtErrors; its exit code and output. */
  const crashed = (crash: string) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const logging = pathToFileURL(join(import.meta.dirname, "logging.ts")).href;
      const script = `import { createLogger, exitOnUncaughtErrors } from ${JSON.stringify(logging)};
        exitOnUncaughtErrors(createLogger());
        ${crash}`;
      const args = ["--import", "tsx", "--input-type=module", "-e", script];
      const child = execFile(process.execPath, args, (_err, stdout, stderr) =>
        resolve({ code: child.exitCode, stdout, stderr }),
      );
    });

  it.each([
    ["thrown", 'setTimeout(() => { throw new Error("boom"); });', "uncaughtException"],
    ["rejected", 'Promise.reject(new Error("boom"));', "unhandledRejection"],
  ])(
    "(%s) is one fatal JSON line on stdout, then exit 1: no stack trace as text on stderr",
    async (_how, crash, origin) => {
      const { code, stdout, stderr } = await crashed(crash);
      expect({ code, stderr }).toEqual({ code: 1, stderr: "" });
      const lines = stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(lines).toEqual([
        expect.objectContaining({
          level: "fatal",
          origin,
          err: expect.objectContaining({ message: "boom" }),
          msg: "an error nothing caught; exiting",
        }),
      ]);
    },
    20_000,
  );
});

describe("the last lines at exit", () => {
  const LINES = 1_000;

  /**
   * Runs `script` (with `log`, `logWritten` and `exitOnUncaughtErrors` in scope) in a
   * process whose stdout is a pipe nobody reads until it says "exiting" on stderr: the
   * pipe is then full (1 000 lines of 1 kB), and a write of its log is under way, waiting
   * for room, when it exits. Resolves with its exit code and its stdout's lines.
   */
  const exitingWhileWriting = (script: string, { read = true } = {}) =>
    new Promise<{ code: number | null; lines: string[] }>((resolve) => {
      const logging = pathToFileURL(join(import.meta.dirname, "logging.ts")).href;
      const child = spawn(
        process.execPath,
        [
          "--import",
          "tsx",
          "--input-type=module",
          "-e",
          `import { createLogger, exitOnUncaughtErrors, logWritten } from ${JSON.stringify(logging)};
          const log = createLogger();
          const pad = "x".repeat(1_000);
          for (let i = 0; i < ${LINES}; i++) log.info({ i, pad }, "line");
          // The log writes what the pipe takes, then waits to write the rest.
          await new Promise((resolve) => setTimeout(resolve, 300));
          process.stderr.write("exiting\\n");
          ${script}`,
        ],
        { stdio: ["ignore", "pipe", "pipe"] },
      );
      let stdout = "";
      child.stdout.pause();
      // Without `read`, a process that does not exit is ended after 20 s (code null).
      const hung = setTimeout(() => child.kill("SIGKILL"), read ? 60_000 : 20_000);
      child.stderr.on("data", (chunk: Buffer) => {
        if (!read || !chunk.toString().includes("exiting")) return;
        child.stdout.on("data", (c: Buffer) => {
          stdout += c.toString();
        });
        child.stdout.resume();
      });
      child.on("close", (code) => {
        clearTimeout(hung);
        resolve({ code, lines: stdout.trim().split("\n") });
      });
    });

  const messages = (lines: string[]) =>
    lines.map((l) => {
      const { i, msg } = JSON.parse(l) as { i?: number; msg: string };
      return i === undefined ? msg : `${msg} ${i}`;
    });
  const logged = Array.from({ length: LINES }, (_, i) => `line ${i}`);

  it.each([
    [
      "a stop (run's: it exits once its log is written)",
      'log.info("manager stopped"); await logWritten(log, 10_000); process.exit(0);',
      0,
      "manager stopped",
    ],
    [
      "an error nothing caught",
      'exitOnUncaughtErrors(log); setTimeout(() => { throw new Error("boom"); });',
      1,
      "an error nothing caught; exiting",
    ],
  ])(
    "after %s, every line is on stdout, in order, the last one last",
    async (_after, script, exitCode, last) => {
      const { code, lines } = await exitingWhileWriting(script);
      expect(code).toBe(exitCode);
      expect(messages(lines)).toEqual([...logged, last]);
    },
    30_000,
  );

  it.each([
    ["a stop", "await logWritten(log, 500); process.exit(0);", 0],
    [
      "an error nothing caught",
      'exitOnUncaughtErrors(log); setTimeout(() => { throw new Error("boom"); });',
      1,
    ],
  ])(
    "after %s, exits although nobody reads its stdout, the lines it cannot write dropped",
    async (_after, script, exitCode) => {
      const { code } = await exitingWhileWriting(script, { read: false });
      expect(code).toBe(exitCode);
    },
    30_000,
  );
});
