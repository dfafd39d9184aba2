/**
 * Where the operator finds the API server and its credentials, without loading
 * client-node for the usual cases: an explicit kubeconfig file, `$KUBECONFIG` (one
 * file), the pod's service account (in-cluster), else `~/.kube/config`, in
 * controller-runtime's order; `context` picks a context of the file other than its
 * current one. A kubeconfig whose user needs more than a token, a token file or a
 * client certificate (an exec plugin, an auth provider, a password), and a
 * `$KUBECONFIG` listing several files, are loaded by client-node's `KubeConfig`
 * instead (imported only then): client-node and its generated API models cost
 * ~80 MiB of memory once imported, which the operator does not otherwise need.
 */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, isAbsolute, join } from "node:path";
import type { Logger } from "pino";
import { parse } from "yaml";
import type { KubeConfigLike } from "./kube-credentials.js";

/** The service account's files in a pod. */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/** How long a token read from a file is used before it is read again (client-go: 1 min). */
const TOKEN_FILE_TTL_MS = 60_000;

/** A cluster and user this loader can serve by itself. */
interface LeanAccess {
  server: string;
  proxyUrl?: string;
  skipTLSVerify?: boolean;
  tlsServerName?: string;
  ca?: { data?: Buffer; file?: string };
  cert?: { data?: Buffer; file?: string };
  key?: { data?: Buffer; file?: string };
  token?: string;
  tokenFile?: string;
}

/**
 * A {@link KubeConfigLike} over a {@link LeanAccess}: files are read per request, a
 * token file once a minute and again at once after {@link invalidateCredentials}; a
 * token file wins over a static token (client-go's order). A token file that cannot be
 * read again leaves the last token in use, with one warning until it reads again.
 */
class LeanKubeConfig implements KubeConfigLike {
  private token: { value: string; at: number } | undefined;
  private warned = false;

  constructor(
    private readonly access: LeanAccess,
    readonly proxyEnv: NodeJS.ProcessEnv,
    private readonly log?: Logger,
  ) {}

  getCurrentCluster(): { server: string; proxyUrl?: string } {
    const { server, proxyUrl } = this.access;
    return proxyUrl ? { server, proxyUrl } : { server };
  }

  async applyToHTTPSOptions(opts: object): Promise<void> {
    const o = opts as Record<string, unknown> & { headers?: Record<string, string> };
    const a = this.access;
    if (a.skipTLSVerify) o.rejectUnauthorized = false;
    if (a.tlsServerName) o.servername = a.tlsServerName;
    const ca = material(a.ca);
    if (ca) o.ca = ca;
    const cert = material(a.cert);
    if (cert) o.cert = cert;
    const key = material(a.key);
    if (key) o.key = key;
    const token = this.fileToken() ?? a.token;
    if (token) o.headers = { ...o.headers, Authorization: `Bearer ${token}` };
  }

  invalidateCredentials(): boolean {
    if (!this.access.tokenFile) return false;
    if (this.token) this.token.at = Number.NEGATIVE_INFINITY;
    return true;
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

function material(m: { data?: Buffer; file?: string } | undefined): Buffer | undefined {
  if (!m) return undefined;
  return m.data ?? (m.file ? readFileSync(m.file) : undefined);
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
  /** Where a token file that cannot be read again is reported. */
  log?: Logger;
}

/** Loads the kubeconfig the operator runs with (see the module comment). */
export async function loadKubeConfig(options: LoadKubeConfigOptions = {}): Promise<KubeConfigLike> {
  const env = options.env ?? process.env;
  const { context, log } = options;
  const files = options.kubeconfig
    ? [options.kubeconfig]
    : (env.KUBECONFIG ?? "").split(delimiter).filter((f) => f !== "");
  if (files.length > 1) return clientNodeConfig(files.join(delimiter), context);
  const file = files[0];
  if (file) return fromFileOrClientNode(file, context, env, log);
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
  if (home) return fromFileOrClientNode(home, context, env, log);
  throw new Error(
    "no kubeconfig: pass --kubeconfig, set KUBECONFIG, create ~/.kube/config, or run in a pod",
  );
}

async function fromFileOrClientNode(
  file: string,
  context: string | undefined,
  env: NodeJS.ProcessEnv,
  log: Logger | undefined,
): Promise<KubeConfigLike> {
  const lean = fromFile(file, context);
  return lean ? new LeanKubeConfig(lean, env, log) : clientNodeConfig(file, context);
}

function defaultFile(): string | undefined {
  const file = join(homedir(), ".kube", "config");
  return existsSync(file) ? file : undefined;
}

/** client-node's KubeConfig for what the lean loader does not serve (imported only then). */
async function clientNodeConfig(
  files: string,
  context: string | undefined,
): Promise<KubeConfigLike> {
  const k8s = await import("@kubernetes/client-node");
  const kc = new k8s.KubeConfig();
  // Several files: client-node merges $KUBECONFIG's list as kubectl does.
  if (files.includes(delimiter)) kc.loadFromDefault();
  else kc.loadFromFile(files);
  if (context !== undefined) {
    if (!kc.getContextObject(context)) throw noContext(context, files);
    kc.setCurrentContext(context);
  }
  return kc;
}

function noContext(context: string, file: string): Error {
  return new Error(`the kubeconfig ${file} has no context "${context}"`);
}

type Named<T> = { name: string } & T;
interface KubeconfigFile {
  "current-context"?: string;
  contexts?: Named<{ context?: { cluster?: string; user?: string } }>[];
  clusters?: Named<{ cluster?: Record<string, unknown> }>[];
  users?: Named<{ user?: Record<string, unknown> }>[];
}

/** The user fields this loader serves; any other (exec, auth-provider, username...) is client-node's. */
const LEAN_USER_FIELDS = new Set([
  "client-certificate",
  "client-certificate-data",
  "client-key",
  "client-key-data",
  "token",
  "tokenFile",
]);
const LEAN_CLUSTER_FIELDS = new Set([
  "server",
  "proxy-url",
  "certificate-authority",
  "certificate-authority-data",
  "insecure-skip-tls-verify",
  "tls-server-name",
  "extensions",
]);

/**
 * The access a kubeconfig file describes (its `context`, else its current one), or
 * undefined when client-node must load it.
 */
function fromFile(file: string, context: string | undefined): LeanAccess | undefined {
  const doc = (parse(readFileSync(file, "utf8")) ?? {}) as KubeconfigFile;
  const name = context ?? doc["current-context"];
  const ctx = doc.contexts?.find((c) => c.name === name)?.context;
  if (context !== undefined && !ctx) throw noContext(context, file);
  const cluster = doc.clusters?.find((c) => c.name === ctx?.cluster)?.cluster;
  const user = doc.users?.find((u) => u.name === ctx?.user)?.user ?? {};
  if (!cluster || typeof cluster.server !== "string") return undefined;
  if (!/^https?:\/\//.test(cluster.server)) return undefined;
  if (Object.keys(cluster).some((k) => !LEAN_CLUSTER_FIELDS.has(k))) return undefined;
  if (Object.keys(user).some((k) => !LEAN_USER_FIELDS.has(k))) return undefined;
  const base = dirname(file);
  const pathOf = (v: unknown) =>
    typeof v === "string" && v !== "" ? (isAbsolute(v) ? v : join(base, v)) : undefined;
  const pair = (data: unknown, path: unknown) => {
    if (typeof data === "string" && data !== "") return { data: Buffer.from(data, "base64") };
    const p = pathOf(path);
    return p ? { file: p } : undefined;
  };
  const ca = pair(cluster["certificate-authority-data"], cluster["certificate-authority"]);
  const cert = pair(user["client-certificate-data"], user["client-certificate"]);
  const key = pair(user["client-key-data"], user["client-key"]);
  const tokenFile = pathOf(user.tokenFile);
  const proxyUrl = cluster["proxy-url"];
  return {
    server: cluster.server,
    ...(typeof proxyUrl === "string" && proxyUrl !== "" ? { proxyUrl } : {}),
    ...(cluster["insecure-skip-tls-verify"] === true ? { skipTLSVerify: true } : {}),
    ...(typeof cluster["tls-server-name"] === "string"
      ? { tlsServerName: cluster["tls-server-name"] }
      : {}),
    ...(ca ? { ca } : {}),
    ...(cert ? { cert } : {}),
    ...(key ? { key } : {}),
    ...(typeof user.token === "string" && user.token !== "" ? { token: user.token } : {}),
    ...(tokenFile ? { tokenFile } : {}),
  };
}
