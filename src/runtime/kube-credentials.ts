/**
 * What the transport needs of a kubeconfig: the current cluster's server (and proxy),
 * the TLS options and headers of a request, and a way to drop cached credentials when
 * the server refused them (401). client-node's `KubeConfig` has the first two; the
 * lean loader's (kube-config.ts) all three, and how long its credentials hold.
 */
export interface KubeConfigLike {
  getCurrentCluster(): { server: string; proxyUrl?: string | undefined } | null;
  /** Fills `ca`, `cert`, `key`, `rejectUnauthorized`, `servername`, `headers`, `auth`. */
  applyToHTTPSOptions(opts: object): Promise<void>;
  /** Forgets cached credentials (the next request reads them anew); false when none could change. */
  invalidateCredentials?(): boolean;
  /** The environment HTTPS_PROXY, HTTP_PROXY and NO_PROXY are read from (default `process.env`). */
  readonly proxyEnv?: NodeJS.ProcessEnv;
  /**
   * How long credentials `applyToHTTPSOptions` filled may be used for further requests
   * (ms; until `invalidateCredentials`): Infinity when they cannot change (inline data),
   * the files' re-read interval when they come from files. Undefined: filled for every
   * request (client-node's `KubeConfig`; an exec plugin, whose answer expires).
   */
  readonly credentialsMaxAgeMs?: number;
}

/** A request's TLS options and headers, from a kubeconfig's credentials. */
export interface RequestCredentials {
  /** `ca`, `cert`, `key`, `rejectUnauthorized`, `servername` (what makes a dispatcher differ). */
  tls: Record<string, unknown>;
  headers: Record<string, string | string[]>;
  /** False when a header has several values (HTTP/1.1 only). */
  allowH2: boolean;
}

/** The TLS options that make two dispatchers different. */
export const TLS_FIELDS = [
  "ca",
  "cert",
  "key",
  "pfx",
  "passphrase",
  "rejectUnauthorized",
  "servername",
];

/** True when TLS options `a` and `b` hold the same material (one dispatcher serves both). */
export function sameTls(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  return TLS_FIELDS.every((f) => sameValue(a[f], b[f]));
}

function sameValue(a: unknown, b: unknown): boolean {
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((v, i) => sameValue(v, b[i]));
  }
  return a === b;
}

/**
 * What reads a request's credentials from `config` as they are now (a token file, an
 * exec plugin's answer), with the `userAgent` and JSON `accept` headers.
 */
export function requestCredentials(
  config: KubeConfigLike,
  userAgent: string,
): () => Promise<RequestCredentials> {
  const fill = requestOptionsFiller(config);
  return async () => {
    const opts: Record<string, unknown> & { headers?: Record<string, unknown>; auth?: string } = {
      headers: {},
    };
    await fill(opts);
    const tls: Record<string, unknown> = {};
    for (const f of TLS_FIELDS) if (opts[f] !== undefined) tls[f] = opts[f];
    const headers: Record<string, string | string[]> = {
      accept: "application/json",
      "user-agent": userAgent,
    };
    // A list is one header line per value (Impersonate-Group), which undici sends on
    // HTTP/1.1 only: over HTTP/2 it joins them into one value, one group named "a, b"
    // for the API server. A config with such headers (several as-groups) uses HTTP/1.1.
    let repeated = false;
    for (const [k, v] of Object.entries(opts.headers ?? {})) {
      if (Array.isArray(v) && v.length > 1) repeated = true;
      headers[k.toLowerCase()] = Array.isArray(v) ? v.map(String) : String(v);
    }
    if (opts.auth) headers.authorization = `Basic ${Buffer.from(opts.auth).toString("base64")}`;
    return { tls, headers, allowH2: !repeated };
  };
}

/** client-node's `KubeConfig` beyond its typed API: what fills a request's options. */
interface ClientNodeInternals {
  applyOptions?: (opts: object) => Promise<void>;
  getCurrentUser?: () => { name?: string; username?: string; password?: string } | null;
}

/**
 * What fills a request's TLS options and headers from `config`, chosen once per config:
 * its own `applyToHTTPSOptions` (the lean loader's); for client-node's `KubeConfig`,
 * what that method calls minus the HTTP agent it builds there (unused here, and refused
 * for an http:// server).
 */
function requestOptionsFiller(
  config: KubeConfigLike,
): (opts: Record<string, unknown>) => Promise<void> {
  const c = config as KubeConfigLike & ClientNodeInternals;
  const applyOptions = c.applyOptions;
  if (typeof applyOptions !== "function") return config.applyToHTTPSOptions.bind(config);
  return async (opts) => {
    await applyOptions.call(c, opts);
    const user = c.getCurrentUser?.();
    if (user?.username) opts.auth = `${user.username}:${user.password ?? ""}`;
  };
}

/** client-node's authenticators as far as their caches go (not part of its typed API). */
interface CachingAuthenticator {
  /** ExecAuth: the exec plugin's last answer per user name. */
  tokenCache?: Record<string, unknown>;
  /** FileAuth (client-node's in-cluster config): the token file's last read. */
  token?: string | null;
  lastRead?: Date | null;
  refreshToken?: unknown;
}

/**
 * Forgets the credentials `config` caches, so that the next request reads the token
 * file or runs the exec plugin again: the lean loader's own method, or for
 * client-node's `KubeConfig` its exec plugin cache and token-file cache. False when
 * the config has no such credentials (a static token, a client certificate only).
 */
export function invalidateCredentials(config: KubeConfigLike): boolean {
  if (config.invalidateCredentials) return config.invalidateCredentials();
  const authenticators = (config as { authenticators?: unknown }).authenticators;
  const user = (config as { getCurrentUser?: () => { name?: string } | null }).getCurrentUser?.();
  if (!Array.isArray(authenticators) || !user?.name) return false;
  let any = false;
  for (const a of authenticators as CachingAuthenticator[]) {
    if (a.tokenCache?.[user.name]) {
      a.tokenCache[user.name] = null;
      any = true;
    }
    if (typeof a.refreshToken === "function" && a.token) {
      a.token = null;
      a.lastRead = null;
      any = true;
    }
  }
  return any;
}
