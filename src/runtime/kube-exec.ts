/**
 * A kubeconfig user's exec credential plugin (`client.authentication.k8s.io/v1` or
 * `v1beta1`: `aws eks get-token`, `gke-gcloud-auth-plugin`, kubelogin...) run as
 * client-go runs it: non-interactive (no stdin; `interactiveMode: Always` is refused),
 * `KUBERNETES_EXEC_INFO` in its environment (with the cluster when
 * `provideClusterInfo`), its answer kept until its `expirationTimestamp` or until the
 * server refuses it (401). One run at a time: requests that need a credential while
 * the plugin runs wait for that run. The plugin's stderr is logged line by line (the
 * credential it answered, if quoted there, replaced); its stdout, which holds the
 * credential, never appears in a log line or an error.
 */
import { spawn } from "node:child_process";
import type { Logger } from "pino";

/** A user's `exec` as the kubeconfig has it. */
export interface ExecConfig {
  apiVersion?: string;
  command?: string;
  args?: string[];
  env?: { name: string; value: string }[] | null;
  interactiveMode?: string;
  provideClusterInfo?: boolean;
  installHint?: string;
}

/** The cluster as `KUBERNETES_EXEC_INFO` gives it to a plugin that asks (`provideClusterInfo`). */
export interface ExecClusterInfo {
  server: string;
  "tls-server-name"?: string;
  "insecure-skip-tls-verify"?: boolean;
  "certificate-authority-data"?: string;
  "proxy-url"?: string;
  config?: unknown;
}

/** What a plugin answered: a token, or a client certificate and key (PEM), or both. */
export interface ExecCredential {
  token?: string;
  clientCertificateData?: string;
  clientKeyData?: string;
  /** When it expires (ms since the epoch); undefined: kept until refused. */
  expiresAt?: number;
}

const API_VERSIONS = new Set([
  "client.authentication.k8s.io/v1",
  "client.authentication.k8s.io/v1beta1",
]);

/** The longest a plugin may run before it is killed and its run fails. */
const EXEC_TIMEOUT_MS = 60_000;

/** Stderr lines of one run that are logged at most. */
const MAX_STDERR_LINES = 20;

/** Runs one user's exec plugin (see the module comment). */
export class ExecCredentialPlugin {
  private cached: ExecCredential | undefined;
  private running: Promise<ExecCredential> | undefined;
  private readonly command: string;

  /** Checks `exec` as client-go does; throws what is wrong with it. */
  constructor(
    private readonly exec: ExecConfig,
    private readonly cluster: ExecClusterInfo | undefined,
    private readonly log?: Logger,
  ) {
    if (!exec.command) throw new Error("the kubeconfig's exec plugin has no command");
    this.command = exec.command;
    if (!API_VERSIONS.has(exec.apiVersion ?? "")) {
      throw new Error(
        `the exec plugin ${this.command} has apiVersion "${exec.apiVersion ?? ""}": ` +
          "client.authentication.k8s.io/v1 or v1beta1 is supported",
      );
    }
    const mode = exec.interactiveMode;
    if (exec.apiVersion === "client.authentication.k8s.io/v1" && !mode) {
      throw new Error(`the exec plugin ${this.command} needs interactiveMode (v1)`);
    }
    if (mode !== undefined && !["Never", "IfAvailable", "Always"].includes(mode)) {
      throw new Error(`the exec plugin ${this.command} has an unknown interactiveMode "${mode}"`);
    }
    if (mode === "Always") {
      throw new Error(
        `the exec plugin ${this.command} has interactiveMode Always: the operator has no terminal`,
      );
    }
  }

  /** The credential to use now: the kept one while valid, else a new run's (shared). */
  credential(): Promise<ExecCredential> {
    const c = this.cached;
    if (c && (c.expiresAt === undefined || c.expiresAt > Date.now())) return Promise.resolve(c);
    this.running ??= this.run().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Forgets the kept credential (the server refused it): the next request runs the plugin. */
  invalidate(): void {
    this.cached = undefined;
  }

  private async run(): Promise<ExecCredential> {
    const { stdout, stderr, code } = await this.spawn();
    let credential: ExecCredential;
    try {
      if (code !== 0) throw new Error(`the exec plugin ${this.command} failed (${code})`);
      credential = this.parse(stdout);
    } catch (err) {
      this.logStderr(stderr, undefined, "warn");
      throw err;
    }
    this.logStderr(stderr, credential, "info");
    this.cached = credential;
    return credential;
  }

  private spawn(): Promise<{ stdout: string; stderr: string; code: number | string }> {
    const info = {
      apiVersion: this.exec.apiVersion,
      kind: "ExecCredential",
      spec: {
        interactive: false,
        ...(this.exec.provideClusterInfo && this.cluster ? { cluster: this.cluster } : {}),
      },
    };
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const e of this.exec.env ?? []) env[e.name] = e.value;
    env.KUBERNETES_EXEC_INFO = JSON.stringify(info);
    return new Promise((resolve) => {
      const child = spawn(this.command, this.exec.args ?? [], {
        env,
        stdio: ["ignore", "pipe", "pipe"],
        timeout: EXEC_TIMEOUT_MS,
      });
      let stdout = "";
      let stderr = "";
      child.stdout.setEncoding("utf8").on("data", (d: string) => {
        stdout += d;
      });
      child.stderr.setEncoding("utf8").on("data", (d: string) => {
        stderr += d;
      });
      let failed: string | undefined;
      child.on("error", (err: NodeJS.ErrnoException) => {
        const hint = this.exec.installHint ? `; ${this.exec.installHint.trim()}` : "";
        failed = err.code === "ENOENT" ? `not found${hint}` : (err.code ?? "error");
      });
      child.on("close", (code, signal) => {
        resolve({ stdout, stderr, code: failed ?? code ?? `killed by ${signal}` });
      });
    });
  }

  /** The credential of the plugin's stdout, checked; errors never quote it. */
  private parse(stdout: string): ExecCredential {
    const bad = (what: string) => new Error(`the exec plugin ${this.command} answered ${what}`);
    let doc: {
      apiVersion?: unknown;
      kind?: unknown;
      status?: {
        token?: unknown;
        clientCertificateData?: unknown;
        clientKeyData?: unknown;
        expirationTimestamp?: unknown;
      };
    };
    try {
      doc = JSON.parse(stdout);
    } catch {
      throw bad("something other than JSON");
    }
    if (doc?.kind !== "ExecCredential") throw bad("no ExecCredential");
    if (doc.apiVersion !== this.exec.apiVersion) {
      throw bad(`apiVersion ${String(doc.apiVersion)}, not ${this.exec.apiVersion}`);
    }
    const s = doc.status ?? {};
    const str = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);
    const token = str(s.token);
    const cert = str(s.clientCertificateData);
    const key = str(s.clientKeyData);
    if (Boolean(cert) !== Boolean(key)) {
      throw bad("a client certificate without its key, or a key without its certificate");
    }
    if (!token && !cert) throw bad("neither a token nor a client certificate");
    let expiresAt: number | undefined;
    if (s.expirationTimestamp !== undefined && s.expirationTimestamp !== null) {
      expiresAt = Date.parse(String(s.expirationTimestamp));
      if (Number.isNaN(expiresAt)) throw bad("an expirationTimestamp that is not a time");
    }
    return {
      ...(token ? { token } : {}),
      ...(cert && key ? { clientCertificateData: cert, clientKeyData: key } : {}),
      ...(expiresAt !== undefined ? { expiresAt } : {}),
    };
  }

  private logStderr(
    stderr: string,
    credential: ExecCredential | undefined,
    level: "info" | "warn",
  ): void {
    const secrets = [credential?.token, credential?.clientKeyData].filter(
      (s): s is string => s !== undefined,
    );
    const lines = stderr.split("\n").filter((l) => l.trim() !== "");
    for (const raw of lines.slice(0, MAX_STDERR_LINES)) {
      let line = raw.trimEnd();
      for (const s of secrets) line = line.split(s).join("[REDACTED]");
      this.log?.[level]({ plugin: this.command, stderr: line }, "exec plugin stderr");
    }
    if (lines.length > MAX_STDERR_LINES) {
      this.log?.[level](
        { plugin: this.command, omitted: lines.length - MAX_STDERR_LINES },
        "exec plugin stderr: more lines not logged",
      );
    }
  }
}
