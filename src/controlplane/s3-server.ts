/**
 * A local S3-compatible server for the Bucket kind's tests and the playground: MinIO,
 * built from the Go module proxy by tools/minio/build.sh (cached by version, as the
 * control plane is), run single-drive on a data directory on a free loopback port.
 */
import { type ChildProcess, execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { repoRoot } from "./binaries.js";
import { freePort, spawnServer } from "./processes.js";

const run = promisify(execFile);

/** Options of {@link LocalS3Server}. */
export interface LocalS3ServerOptions {
  /** Data directory; default a fresh temporary one, removed at `stop()`. */
  dataDir?: string;
  /** Root access key id (default random). */
  accessKeyId?: string;
  /** Root secret key (default random). */
  secretAccessKey?: string;
  /** The region MinIO serves (MINIO_REGION; default us-east-1). */
  region?: string;
  /** Called with each progress line of a build (first run only). */
  onBuildProgress?: (line: string) => void;
  /** More of MinIO's settings (e.g. `MINIO_IDENTITY_OPENID_CONFIG_URL`). */
  env?: Record<string, string>;
  /** Ends `start()` early: it stops MinIO, removes its temporary directory and rejects. */
  signal?: AbortSignal;
}

/**
 * The MinIO binary, built on first use by tools/minio/build.sh (`AIDC_MINIO_BIN` wins);
 * `signal` stops a build under way.
 */
export async function minioBinary(
  onProgress?: (line: string) => void,
  signal?: AbortSignal,
): Promise<string> {
  const child = run("bash", [join(repoRoot, "tools", "minio", "build.sh")], {
    maxBuffer: 16 * 1024 * 1024,
    timeout: 60 * 60 * 1000,
    signal,
  });
  child.child.stderr?.on("data", (d: Buffer) => {
    for (const line of String(d).split("\n")) if (line.trim()) onProgress?.(line);
  });
  const { stdout } = await child;
  return stdout.trim().split("\n").pop() ?? "";
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every MinIO started in this process, so that an abrupt exit still kills them. */
const live = new Set<ChildProcess>();
let exitHookInstalled = false;
function track(proc: ChildProcess): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on("exit", () => {
      for (const p of live) p.kill("SIGKILL");
    });
  }
  live.add(proc);
  proc.once("exit", () => live.delete(proc));
}

/** A running MinIO on loopback. */
export class LocalS3Server {
  /** `http://127.0.0.1:<port>` once started. */
  url = "";
  /** The region MinIO signs for. */
  readonly region: string;
  accessKeyId: string;
  secretAccessKey: string;
  private proc: ChildProcess | undefined;
  private dataDir: string | undefined;
  private ownDir = false;
  private port = 0;
  private bin = "";
  private output = "";

  constructor(private readonly options: LocalS3ServerOptions = {}) {
    this.region = options.region ?? "us-east-1";
    this.accessKeyId = options.accessKeyId ?? `aidc${randomBytes(8).toString("hex")}`;
    this.secretAccessKey = options.secretAccessKey ?? randomBytes(24).toString("hex");
  }

  /** Builds (first run only) and starts MinIO; resolves once it answers its health check. */
  async start(): Promise<this> {
    this.bin = await minioBinary(this.options.onBuildProgress, this.options.signal);
    this.options.signal?.throwIfAborted();
    this.dataDir = this.options.dataDir;
    if (!this.dataDir) {
      this.dataDir = await mkdtemp(join(tmpdir(), "aidc-s3-"));
      this.ownDir = true;
    }
    this.port = await freePort();
    this.url = `http://127.0.0.1:${this.port}`;
    try {
      await this.launch();
    } catch (err) {
      // Nothing of a server that did not come up is left behind.
      await this.stop();
      throw err;
    }
    return this;
  }

  /**
   * Restarts MinIO on the same data with a new root key pair: the old one is refused
   * from then on (credential rotation in tests).
   */
  async restartWithKeys(accessKeyId: string, secretAccessKey: string): Promise<void> {
    await this.kill();
    this.accessKeyId = accessKeyId;
    this.secretAccessKey = secretAccessKey;
    await this.launch();
  }

  private async launch(): Promise<void> {
    const consolePort = await freePort();
    this.output = "";
    const proc = spawnServer(
      this.bin,
      [
        "server",
        this.dataDir as string,
        "--address",
        `127.0.0.1:${this.port}`,
        "--console-address",
        `127.0.0.1:${consolePort}`,
        "--quiet",
      ],
      {
        stdio: ["ignore", "pipe", "pipe"],
        env: {
          PATH: process.env.PATH ?? "",
          HOME: this.dataDir as string,
          MINIO_ROOT_USER: this.accessKeyId,
          MINIO_ROOT_PASSWORD: this.secretAccessKey,
          MINIO_BROWSER: "off",
          MINIO_UPDATE: "off",
          MINIO_REGION: this.region,
          ...this.options.env,
        },
      },
    );
    const keep = (d: Buffer) => {
      this.output = (this.output + String(d)).slice(-4000);
    };
    proc.stdout?.on("data", keep);
    proc.stderr?.on("data", keep);
    this.proc = proc;
    track(proc);
    const deadline = Date.now() + 60_000;
    for (;;) {
      this.options.signal?.throwIfAborted();
      if (proc.exitCode !== null) {
        throw new Error(`minio exited (${proc.exitCode}): ${this.output.trim()}`);
      }
      try {
        const res = await fetch(`${this.url}/minio/health/ready`);
        if (res.ok) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) {
        throw new Error(`minio did not become ready in 60 s: ${this.output.trim()}`);
      }
      await sleep(100);
    }
  }

  private async kill(): Promise<void> {
    const proc = this.proc;
    this.proc = undefined;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((r) => proc.once("exit", r));
    proc.kill("SIGTERM");
    const timer = setTimeout(() => proc.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  }

  /** Stops MinIO and removes the temporary data directory. */
  async stop(): Promise<void> {
    await this.kill();
    if (this.ownDir && this.dataDir) await rm(this.dataDir, { recursive: true, force: true });
  }
}
