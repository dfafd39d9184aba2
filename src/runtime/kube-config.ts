/**
 * Where the operator finds the API server and its credentials, without loading
 * client-node for the usual cases: an explicit kubeconfig file, `$KUBECONFIG` (one
 * file), the pod's service account (in-cluster), else `~/.kube/config`, in
 * controller-runtime's order. A kubeconfig whose user needs more than a token, a token file or a client
 * certificate (an exec plugin, an auth provider, a password) or whose cluster names a
 * proxy, and a `$KUBECONFIG` listing several files, are loaded by client-node's
 * `KubeConfig` instead (imported only then): client-node and its generated API models
 * cost ~80 MiB of memory once imported, which the operator does not otherwise need.
 */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, isAbsolute, join } from "node:path";
import { parse } from "yaml";
import type { KubeConfigLike } from "./kube-http2.js";

/** The service account's files in a pod. */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/** How long a token read from a file is used before it is read again (client-go: 1 min). */
const TOKEN_FILE_TTL_MS = 60_000;

/** A cluster and user this loader can serve by itself. */
interface LeanAccess {
  server: string;
  skipTLSVerify?: boolean;
  tlsServerName?: string;
  ca?: { data?: Buffer; file?: string };
  cert?: { data?: Buffer; file?: string };
  key?: { data?: Buffer; file?: string };
  token?: string;
  tokenFile?: string;
}

/** A {@link KubeConfigLike} over a {@link LeanAccess}: files are read per request, token files once a minute. */
class LeanKubeConfig implements KubeConfigLike {
  private token: { value: string; at: number } | undefined;

  constructor(private readonly access: LeanAccess) {}

  getCurrentCluster(): { server: string } {
    return { server: this.access.server };
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
    const token = a.token ?? this.fileToken();
    if (token) o.headers = { ...o.headers, Authorization: `Bearer ${token}` };
  }

  private fileToken(): string | undefined {
    const file = this.access.tokenFile;
    if (!file) return undefined;
    const now = Date.now();
    if (!this.token || now - this.token.at >= TOKEN_FILE_TTL_MS) {
      this.token = { value: readFileSync(file, "utf8").trim(), at: now };
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
  /** The environment (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** Where the service account's files are (default {@link SERVICE_ACCOUNT_DIR}). */
  serviceAccountDir?: string;
}

/** Loads the kubeconfig the operator runs with (see the module comment). */
export async function loadKubeConfig(options: LoadKubeConfigOptions = {}): Promise<KubeConfigLike> {
  const env = options.env ?? process.env;
  const files = options.kubeconfig
    ? [options.kubeconfig]
    : (env.KUBECONFIG ?? "").split(delimiter).filter((f) => f !== "");
  if (files.length > 1) return clientNodeConfig(files.join(delimiter));
  const file = files[0];
  if (file) return fromFileOrClientNode(file);
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (host && port) {
    const dir = options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
    return new LeanKubeConfig({
      server: `https://${host.includes(":") ? `[${host}]` : host}:${port}`,
      ca: { file: join(dir, "ca.crt") },
      tokenFile: join(dir, "token"),
    });
  }
  const home = defaultFile();
  if (home) return fromFileOrClientNode(home);
  throw new Error(
    "no kubeconfig: pass --kubeconfig, set KUBECONFIG, create ~/.kube/config, or run in a pod",
  );
}

async function fromFileOrClientNode(file: string): Promise<KubeConfigLike> {
  const lean = fromFile(file);
  return lean ? new LeanKubeConfig(lean) : clientNodeConfig(file);
}

function defaultFile(): string | undefined {
  const file = join(homedir(), ".kube", "config");
  return existsSync(file) ? file : undefined;
}

/** client-node's KubeConfig for what the lean loader does not serve (imported only then). */
async function clientNodeConfig(files: string): Promise<KubeConfigLike> {
  const k8s = await import("@kubernetes/client-node");
  const kc = new k8s.KubeConfig();
  // Several files: client-node merges $KUBECONFIG's list as kubectl does.
  if (files.includes(delimiter)) kc.loadFromDefault();
  else kc.loadFromFile(files);
  return kc;
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
  "certificate-authority",
  "certificate-authority-data",
  "insecure-skip-tls-verify",
  "tls-server-name",
  "extensions",
]);

/** The access a kubeconfig file describes, or undefined when client-node must load it. */
function fromFile(file: string): LeanAccess | undefined {
  const doc = (parse(readFileSync(file, "utf8")) ?? {}) as KubeconfigFile;
  const ctx = doc.contexts?.find((c) => c.name === doc["current-context"])?.context;
  const cluster = doc.clusters?.find((c) => c.name === ctx?.cluster)?.cluster;
  const user = doc.users?.find((u) => u.name === ctx?.user)?.user ?? {};
  if (!cluster || typeof cluster.server !== "string") return undefined;
  if (!cluster.server.startsWith("https://")) return undefined;
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
  return {
    server: cluster.server,
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
