/**
 * Where the operator finds the API server and its credentials, without loading
 * client-node for the usual cases: an explicit kubeconfig file, `$KUBECONFIG` (one file
 * or several, merged as kubectl merges them: kube-config-files.ts), the pod's service
 * account (in-cluster), else `~/.kube/config`, in controller-runtime's order; `context`
 * picks a context other than the current one. This loader serves a token, a token
 * file, a client certificate, a username and password, an exec plugin (kube-exec.ts)
 * and impersonation (`as`, `as-groups`...); a user with an auth provider (or another
 * field it does not know) is loaded by client-node's `KubeConfig` instead (imported
 * only then): client-node and its generated API models cost ~80 MiB of memory once
 * imported, which the operator does not otherwise need.
 */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import type { Logger } from "pino";
import { type LeanAccess, leanAccess, noContext } from "./kube-config-access.js";
import { type KubeconfigDoc, readKubeconfigs } from "./kube-config-files.js";
import type { KubeConfigLike } from "./kube-credentials.js";
import { ExecCredentialPlugin } from "./kube-exec.js";
import { proxyFor } from "./kube-proxy.js";

/**
 * Where {@link loadKubeConfig} looks without an explicit file, in its order: what the
 * commands' `--kubeconfig` help and docs/configuration.md say.
 */
export const KUBECONFIG_SEARCH = "$KUBECONFIG, else in-cluster, else ~/.kube/config";

/** The service account's files in a pod. */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/** How long a token read from a file is used before it is read again (client-go: 1 min). */
const TOKEN_FILE_TTL_MS = 60_000;

/**
 * How long a CA, certificate or key file's content is used before it is read again: a
 * rotated one is taken within a minute, without a file read per request (~30 µs each).
 */
const TLS_FILE_TTL_MS = 60_000;

/**
 * A {@link KubeConfigLike} over a {@link LeanAccess}: a token file, and CA, certificate
 * and key files, are read once a minute and again at once after
 * {@link invalidateCredentials}; a token file wins over a static token, a token over an
 * exec plugin (client-go's order). A token file that cannot be read again leaves the
 * last token in use, with one warning until it reads again; so does a TLS file (read
 * mid-rotation).
 */
class LeanKubeConfig implements KubeConfigLike {
  private token: { value: string; at: number } | undefined;
  private warned = false;
  private readonly tlsFiles = new Map<string, { data: Buffer; at: number }>();
  private readonly plugin: ExecCredentialPlugin | undefined;
  /** Infinity for inline data, the files' TTL when a file is read, undefined for an exec plugin. */
  readonly credentialsMaxAgeMs: number | undefined;

  constructor(
    private readonly access: LeanAccess,
    readonly proxyEnv: NodeJS.ProcessEnv,
    private readonly log?: Logger,
  ) {
    const exec = access.exec;
    this.plugin = exec ? new ExecCredentialPlugin(exec.config, exec.cluster, log) : undefined;
    const files = [access.ca, access.cert, access.key].some((m) => m?.file && !m.data);
    this.credentialsMaxAgeMs =
      this.plugin && !access.token && !access.tokenFile
        ? undefined
        : files || access.tokenFile
          ? Math.min(TOKEN_FILE_TTL_MS, TLS_FILE_TTL_MS)
          : Number.POSITIVE_INFINITY;
  }

  getCurrentCluster(): { server: string; proxyUrl?: string } {
    const { server, proxyUrl } = this.access;
    return proxyUrl ? { server, proxyUrl } : { server };
  }

  async applyToHTTPSOptions(opts: object): Promise<void> {
    const o = opts as Record<string, unknown> & { headers?: Record<string, string | string[]> };
    const a = this.access;
    if (a.skipTLSVerify) o.rejectUnauthorized = false;
    if (a.tlsServerName) o.servername = a.tlsServerName;
    const ca = this.material(a.ca);
    if (ca) o.ca = ca;
    const cert = this.material(a.cert);
    if (cert) o.cert = cert;
    const key = this.material(a.key);
    if (key) o.key = key;
    let token = this.fileToken() ?? a.token;
    if (!token && this.plugin) {
      const c = await this.plugin.credential();
      token = c.token;
      if (c.clientCertificateData && c.clientKeyData) {
        o.cert = Buffer.from(c.clientCertificateData);
        o.key = Buffer.from(c.clientKeyData);
      }
    }
    if (token) o.headers = { ...o.headers, Authorization: `Bearer ${token}` };
    else if (a.basic) o.auth = `${a.basic.username}:${a.basic.password}`;
    if (a.impersonate) o.headers = { ...o.headers, ...a.impersonate };
  }

  invalidateCredentials(): boolean {
    const a = this.access;
    // A refused client certificate may have been rotated on disk.
    const certFile = a.cert?.file !== undefined || a.key?.file !== undefined;
    this.tlsFiles.clear();
    if (a.tokenFile) {
      if (this.token) this.token.at = Number.NEGATIVE_INFINITY;
      return true;
    }
    if (this.plugin && !a.token) {
      this.plugin.invalidate();
      return true;
    }
    return certFile;
  }

  /** The content of `m` (a file's read at most once a minute; see the class comment). */
  private material(m: { data?: Buffer; file?: string } | undefined): Buffer | undefined {
    if (m?.data) return m.data;
    const file = m?.file;
    if (!file) return undefined;
    const now = Date.now();
    const kept = this.tlsFiles.get(file);
    if (kept && now - kept.at < TLS_FILE_TTL_MS) return kept.data;
    try {
      const data = readFileSync(file);
      // The same Buffer while unchanged: the connection compares them per request.
      this.tlsFiles.set(file, { data: kept?.data.equals(data) ? kept.data : data, at: now });
    } catch (err) {
      if (!kept) throw err;
      kept.at = now;
      this.log?.warn(
        { file, error: (err as Error).message },
        "cannot read a TLS file again; its last content stays in use",
      );
    }
    return this.tlsFiles.get(file)?.data;
  }

  private fileToken(): string | undefined {
    const file = this.access.tokenFile;
    if (!file) return undefined;
    const now = Date.now();
    if (!this.token || now - this.token.at >= TOKEN_FILE_TTL_MS) {
      try {
        this.token = { value: readFileSync(file, "utf8").trim(), at: now };
        this.warned = false;
      } catch (err) {
        if (!this.token) throw err;
        // Kept, and tried again on the next request after a minute.
        this.token.at = now;
        if (!this.warned) {
          this.warned = true;
          this.log?.warn(
            { tokenFile: file, error: (err as Error).message },
            "cannot read the token file again; the last token read stays in use",
          );
        }
      }
    }
    return this.token.value;
  }
}

/** Options of {@link loadKubeConfig}. */
export interface LoadKubeConfigOptions {
  /** An explicit kubeconfig file (`--kubeconfig`). */
  kubeconfig?: string;
  /** A context of the kubeconfig file other than its current one (`--context`). */
  context?: string;
  /**
   * The environment (default `process.env`): KUBECONFIG, the in-cluster variables, and
   * for a config this loader serves, the proxy variables (HTTPS_PROXY...).
   */
  env?: NodeJS.ProcessEnv;
  /** Where the service account's files are (default {@link SERVICE_ACCOUNT_DIR}). */
  serviceAccountDir?: string;
  /** Where a token file that cannot be read again is reported, and an exec plugin's stderr. */
  log?: Logger;
}

/**
 * Loads the kubeconfig the operator runs with (see the module comment); rejects one
 * whose proxy (`proxy-url`, else HTTPS_PROXY...) the transport cannot use, as kubectl
 * does, rather than failing every request.
 */
export async function loadKubeConfig(options: LoadKubeConfigOptions = {}): Promise<KubeConfigLike> {
  const config = await load(options);
  const cluster = config.getCurrentCluster();
  if (cluster?.server && URL.canParse(cluster.server)) {
    try {
      proxyFor(new URL(cluster.server), cluster.proxyUrl, config.proxyEnv ?? process.env);
    } catch (err) {
      const from = cluster.proxyUrl ? "proxy-url" : "HTTPS_PROXY or HTTP_PROXY";
      throw new Error(`the proxy of the API server (${from}): ${(err as Error).message}`);
    }
  }
  return config;
}

async function load(options: LoadKubeConfigOptions): Promise<KubeConfigLike> {
  const env = options.env ?? process.env;
  const { context, log } = options;
  if (options.kubeconfig) {
    return fromDoc(
      readKubeconfigs([options.kubeconfig], true),
      options.kubeconfig,
      context,
      env,
      log,
    );
  }
  const files = (env.KUBECONFIG ?? "").split(delimiter).filter((f) => f !== "");
  if (files.length > 0)
    return fromDoc(readKubeconfigs(files), files.join(delimiter), context, env, log);
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  // A context names a kubeconfig file's: in-cluster has none.
  if (host && port && context === undefined) {
    const dir = options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
    return new LeanKubeConfig(
      {
        server: `https://${host.includes(":") ? `[${host}]` : host}:${port}`,
        ca: { file: join(dir, "ca.crt") },
        tokenFile: join(dir, "token"),
      },
      env,
      log,
    );
  }
  const home = defaultFile();
  if (home) return fromDoc(readKubeconfigs([home], true), home, context, env, log);
  throw new Error(
    "no kubeconfig: pass --kubeconfig, set KUBECONFIG, create ~/.kube/config, or run in a pod",
  );
}

/** The lean loader over `doc`, or client-node's KubeConfig when it must load it. */
async function fromDoc(
  doc: KubeconfigDoc,
  where: string,
  context: string | undefined,
  env: NodeJS.ProcessEnv,
  log: Logger | undefined,
): Promise<KubeConfigLike> {
  const lean = leanAccess(doc, where, context);
  return lean ? new LeanKubeConfig(lean, env, log) : clientNodeConfig(doc, where, context);
}

function defaultFile(): string | undefined {
  const file = join(homedir(), ".kube", "config");
  return existsSync(file) ? file : undefined;
}

/** client-node's KubeConfig for what the lean loader does not serve (imported only then). */
async function clientNodeConfig(
  doc: KubeconfigDoc,
  where: string,
  context: string | undefined,
): Promise<KubeConfigLike> {
  const k8s = await import("@kubernetes/client-node");
  const kc = new k8s.KubeConfig();
  // Merged already, every path absolute (kube-config-files.ts).
  kc.loadFromString(JSON.stringify(doc));
  if (context !== undefined) {
    if (!kc.getContextObject(context)) throw noContext(context, where);
    kc.setCurrentContext(context);
  }
  return kc;
}
