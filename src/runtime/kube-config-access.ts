/**
 * What the operator's lean kubeconfig loader (kube-config.ts) takes of a kubeconfig
 * document: the cluster and user of a context, when every field of theirs is one it
 * serves; otherwise client-node's `KubeConfig` loads the document.
 */
import { readFileSync } from "node:fs";
import type { KubeconfigDoc } from "./kube-config-files.js";
import type { ExecClusterInfo, ExecConfig } from "./kube-exec.js";

/** A cluster and user the lean loader serves by itself. */
export interface LeanAccess {
  server: string;
  proxyUrl?: string;
  skipTLSVerify?: boolean;
  tlsServerName?: string;
  ca?: { data?: Buffer; file?: string };
  cert?: { data?: Buffer; file?: string };
  key?: { data?: Buffer; file?: string };
  token?: string;
  tokenFile?: string;
  basic?: { username: string; password: string };
  exec?: { config: ExecConfig; cluster: ExecClusterInfo };
  /** Impersonation headers (from `as`, `as-uid`, `as-groups`, `as-user-extra`). */
  impersonate?: Record<string, string | string[]>;
}

/** The user fields the lean loader serves; any other (auth-provider...) is client-node's. */
const LEAN_USER_FIELDS = new Set([
  "client-certificate",
  "client-certificate-data",
  "client-key",
  "client-key-data",
  "token",
  "tokenFile",
  "username",
  "password",
  "exec",
  "as",
  "as-uid",
  "as-groups",
  "as-user-extra",
  "extensions",
]);
const LEAN_CLUSTER_FIELDS = new Set([
  "server",
  "proxy-url",
  "certificate-authority",
  "certificate-authority-data",
  "insecure-skip-tls-verify",
  "tls-server-name",
  // The operator never asks for compressed answers.
  "disable-compression",
  "extensions",
]);

/** The error of a context the kubeconfig lacks. */
export function noContext(context: string, where: string): Error {
  return new Error(`the kubeconfig ${where} has no context "${context}"`);
}

/**
 * The access `doc` describes (its `context`, else its current one), or undefined when
 * client-node must load it; throws when the context, or its cluster's server, is missing.
 * Relative paths were made absolute as it was read.
 */
export function leanAccess(
  doc: KubeconfigDoc,
  where: string,
  context: string | undefined,
): LeanAccess | undefined {
  const name = context ?? doc["current-context"];
  if (name === undefined) {
    throw new Error(`the kubeconfig ${where} has no current-context: set one, or pass --context`);
  }
  const ctx = doc.contexts.find((c) => c.name === name)?.context;
  if (!ctx) throw noContext(name, where);
  const cluster = doc.clusters.find((c) => c.name === ctx.cluster)?.cluster;
  const user = doc.users.find((u) => u.name === ctx.user)?.user ?? {};
  // Neither loader could send a request: said at start, not at every request.
  if (typeof cluster?.server !== "string" || cluster.server === "") {
    throw new Error(`the kubeconfig ${where}: context "${name}" has no cluster with a server`);
  }
  if (!/^https?:\/\//.test(cluster.server)) return undefined;
  if (Object.keys(cluster).some((k) => !LEAN_CLUSTER_FIELDS.has(k))) return undefined;
  if (Object.keys(user).some((k) => !LEAN_USER_FIELDS.has(k))) return undefined;
  const str = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);
  const pair = (data: unknown, path: unknown) => {
    const d = str(data);
    if (d) return { data: Buffer.from(d, "base64") };
    const p = str(path);
    return p ? { file: p } : undefined;
  };
  const ca = pair(cluster["certificate-authority-data"], cluster["certificate-authority"]);
  const cert = pair(user["client-certificate-data"], user["client-certificate"]);
  const key = pair(user["client-key-data"], user["client-key"]);
  const tokenFile = str(user.tokenFile);
  const token = str(user.token);
  const proxyUrl = str(cluster["proxy-url"]);
  const tlsServerName = str(cluster["tls-server-name"]);
  const username = str(user.username);
  const exec = user.exec as ExecConfig | undefined;
  const impersonate = impersonation(user);
  return {
    server: cluster.server,
    ...(proxyUrl ? { proxyUrl } : {}),
    ...(cluster["insecure-skip-tls-verify"] === true ? { skipTLSVerify: true } : {}),
    ...(tlsServerName ? { tlsServerName } : {}),
    ...(ca ? { ca } : {}),
    ...(cert ? { cert } : {}),
    ...(key ? { key } : {}),
    ...(token ? { token } : {}),
    ...(tokenFile ? { tokenFile } : {}),
    ...(username ? { basic: { username, password: str(user.password) ?? "" } } : {}),
    ...(exec ? { exec: { config: exec, cluster: execClusterInfo(cluster, ca) } } : {}),
    ...(impersonate ? { impersonate } : {}),
  };
}

/** The cluster as an exec plugin with `provideClusterInfo` is told it. */
function execClusterInfo(
  cluster: Record<string, unknown>,
  ca: { data?: Buffer; file?: string } | undefined,
): ExecClusterInfo {
  const caData = ca?.data ?? (ca?.file ? readCa(ca.file) : undefined);
  const extensions = Array.isArray(cluster.extensions)
    ? (cluster.extensions as { name?: unknown; extension?: unknown }[])
    : [];
  const config = extensions.find((e) => e.name === "client.authentication.k8s.io/exec");
  return {
    server: String(cluster.server),
    ...(typeof cluster["tls-server-name"] === "string"
      ? { "tls-server-name": cluster["tls-server-name"] }
      : {}),
    ...(cluster["insecure-skip-tls-verify"] === true ? { "insecure-skip-tls-verify": true } : {}),
    ...(caData ? { "certificate-authority-data": caData.toString("base64") } : {}),
    ...(typeof cluster["proxy-url"] === "string" ? { "proxy-url": cluster["proxy-url"] } : {}),
    ...(config ? { config: config.extension } : {}),
  };
}

function readCa(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined; // the request that needs it reports the file
  }
}

/**
 * The impersonation headers of `user` (client-go's): Impersonate-User, -Uid, one
 * Impersonate-Group per group, one Impersonate-Extra-<key> per value.
 */
function impersonation(
  user: Record<string, unknown>,
): Record<string, string | string[]> | undefined {
  const headers: Record<string, string | string[]> = {};
  if (typeof user.as === "string" && user.as !== "") headers["Impersonate-User"] = user.as;
  if (typeof user["as-uid"] === "string" && user["as-uid"] !== "") {
    headers["Impersonate-Uid"] = user["as-uid"];
  }
  const groups = user["as-groups"];
  if (Array.isArray(groups) && groups.length > 0) headers["Impersonate-Group"] = groups.map(String);
  const extra = user["as-user-extra"];
  if (extra && typeof extra === "object") {
    for (const [k, v] of Object.entries(extra as Record<string, unknown>)) {
      const values = (Array.isArray(v) ? v : [v]).map(String);
      if (values.length > 0) headers[`Impersonate-Extra-${headerKeyEscape(k)}`] = values;
    }
  }
  return Object.keys(headers).length > 0 ? headers : undefined;
}

/** A key as a header name carries it: what is not a token character percent-encoded (client-go). */
function headerKeyEscape(key: string): string {
  let out = "";
  for (const b of Buffer.from(key)) {
    const ch = String.fromCharCode(b);
    out += /^[A-Za-z0-9!#$&'*+.^_`|~-]$/.test(ch)
      ? ch
      : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}
