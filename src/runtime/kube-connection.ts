/**
 * The connection of a {@link KubeTransport}: one undici dispatcher at a time per
 * kubeconfig object. HTTP/2 when the server offers it (ALPN), HTTP/1.1 otherwise, plain
 * HTTP for an http:// server; streams of one HTTP/2 connection while the server's stream
 * limit allows, another connection when it does not (never a silent queue); through the
 * cluster's `proxy-url` or the environment's proxy (kube-proxy.ts); the server URL's
 * path kept as a prefix of every path.
 *
 * Dead connections: an HTTP/2 PING every 15 s, a connection whose PING is still
 * unanswered at the next one is torn down (client-go: 15 s ping after 30 s read-idle);
 * TCP keepalive after 30 s idle; the informer's watchdog calls {@link KubeConnection.drop}
 * with the generation a silent watch ran on. After a GOAWAY new requests go to a new
 * dispatcher while the old one's watches finish.
 *
 * Credentials come from a {@link KubeConfigLike} on every request: client-node's
 * `KubeConfig` (any auth it supports) or the operator's lean loader (kube-config.ts).
 * Bearer tokens are headers set per request; new TLS material (a rotated client
 * certificate or CA) makes a new dispatcher, the old one closes once its requests end.
 * A header of several values (Impersonate-Group) needs HTTP/1.1 (see {@link prepare}).
 */
import type { Dispatcher } from "undici";
import Pool from "undici/lib/dispatcher/pool.js";
import { type KubeConfigLike, requestOptionsFiller } from "./kube-credentials.js";
import { proxyFor } from "./kube-proxy.js";
import { operatorUserAgent } from "./user-agent.js";

/** Options of a {@link KubeConnection} (and of the transport over it). */
export interface KubeConnectionOptions {
  /** Default {@link operatorUserAgent}. */
  userAgent?: string;
  /** Headers and body-idle timeout of a request other than a watch. Default 60 s. */
  requestTimeoutMs?: number;
  /** HTTP/2 PING interval. Default 15 s. */
  pingIntervalMs?: number;
  /** Where HTTPS_PROXY and friends are read (default the config's `proxyEnv`, else `process.env`). */
  env?: NodeJS.ProcessEnv;
}

/** The longest a dispatcher left after a GOAWAY finishes its requests (watches: 5-10 min). */
const RETIRED_MAX_MS = 11 * 60_000;

/** The TLS options that make two dispatchers different. */
const TLS_FIELDS = ["ca", "cert", "key", "pfx", "passphrase", "rejectUnauthorized", "servername"];

/** undici's Pool and ProxyAgent (both a DispatcherBase) tell whether they were closed. */
type ClosableDispatcher = Dispatcher & { readonly closed: boolean; readonly destroyed: boolean };

/** One dispatcher and where its requests go. */
export interface Generation {
  dispatcher: ClosableDispatcher;
  tls: Record<string, unknown>;
  generation: number;
  origin: string;
  /** The server URL's path ("" or e.g. `/k8s/clusters/c-abc`). */
  prefix: string;
  servername: string | undefined;
}

/** One dispatcher at a time, shared by every request of a kubeconfig. See the module comment. */
export class KubeConnection {
  private current: Generation | undefined;
  private generations = 0;
  private readonly userAgent: string;
  /** Fills a request's TLS options and headers from the config (its credentials). */
  private readonly fillRequestOptions: (opts: Record<string, unknown>) => Promise<void>;
  /** Headers and body-idle timeout of a request other than a watch. */
  readonly requestTimeoutMs: number;

  constructor(
    private readonly config: KubeConfigLike,
    private readonly options: KubeConnectionOptions = {},
  ) {
    this.userAgent = options.userAgent ?? operatorUserAgent();
    this.requestTimeoutMs = options.requestTimeoutMs ?? 60_000;
    this.fillRequestOptions = requestOptionsFiller(config);
  }

  /** The generation requests run on now, or the next one (what a watch runs on), for {@link drop}. */
  generation(): number {
    const g = this.current;
    return g && !g.dispatcher.destroyed ? g.generation : this.generations + 1;
  }

  /** Destroys the dispatcher of `generation` if it is the current one (its requests fail); true when it was. */
  drop(generation: number): boolean {
    const g = this.current;
    if (!g || g.generation !== generation) return false;
    this.current = undefined;
    void g.dispatcher.destroy(new Error("connection dropped: a watch on it went silent"));
    return true;
  }

  /** Closes the dispatcher once its requests end. */
  async close(): Promise<void> {
    const g = this.current;
    this.current = undefined;
    await g?.dispatcher.close();
  }

  /** The current dispatcher for the request's TLS options (a new one when they changed), and its headers. */
  async prepare(): Promise<{ g: Generation; headers: Record<string, string | string[]> }> {
    const opts: Record<string, unknown> & { headers?: Record<string, unknown>; auth?: string } = {
      headers: {},
    };
    await this.fillRequestOptions(opts);
    const tls: Record<string, unknown> = {};
    for (const f of TLS_FIELDS) if (opts[f] !== undefined) tls[f] = opts[f];
    let g = this.current;
    if (g && !usable(g)) g = undefined;
    if (g && !TLS_FIELDS.every((f) => sameValue(g?.tls[f], tls[f]))) {
      // New TLS material: the old dispatcher finishes its requests and closes.
      void g.dispatcher.close();
      g = undefined;
    }
    const headers: Record<string, string | string[]> = {
      accept: "application/json",
      "user-agent": this.userAgent,
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
    g ??= await this.connect(tls, !repeated);
    return { g, headers };
  }

  /**
   * A GOAWAY (the API server answers a refused token with one, and sends them to
   * rebalance with --goaway-chance): undici's connection would hold new requests until
   * every stream left on the old session ended, watches included. New requests go to a
   * new dispatcher; the old one closes once its requests end (the informers' watches
   * end within 10 min), and is destroyed if they have not by {@link RETIRED_MAX_MS}.
   */
  private retire(g: Generation): void {
    if (this.current !== g) return;
    this.current = undefined;
    void g.dispatcher.close();
    setTimeout(() => {
      if (!g.dispatcher.destroyed) void g.dispatcher.destroy(new Error("connection retired"));
    }, RETIRED_MAX_MS).unref();
  }

  private async connect(tls: Record<string, unknown>, allowH2: boolean): Promise<Generation> {
    const cluster = this.config.getCurrentCluster();
    if (!cluster?.server) throw new Error("the kubeconfig has no current cluster");
    const url = new URL(cluster.server);
    const connect = {
      ...tls,
      // Go's servers prefer h2 too; undici's default offers http/1.1 first.
      preferH2: allowH2,
      keepAlive: true,
      keepAliveInitialDelay: 30_000,
      timeout: 30_000,
    };
    const options = {
      allowH2,
      // An idle connection is kept, not reopened per burst; closed before the API
      // server's own 90 s idle timeout would close it under a request.
      keepAliveTimeout: 60_000,
      keepAliveMaxTimeout: 600_000,
      headersTimeout: this.requestTimeoutMs,
      bodyTimeout: this.requestTimeoutMs,
      // The server's SETTINGS lower this; streams beyond it open another connection.
      h2Options: {
        pingInterval: this.options.pingIntervalMs ?? 15_000,
        maxConcurrentStreams: 1_000,
      },
    };
    const env = this.options.env ?? this.config.proxyEnv ?? process.env;
    const proxy = proxyFor(url, cluster.proxyUrl, env);
    let dispatcher: ClosableDispatcher;
    if (proxy) {
      // Loaded only when a proxy is named: undici's index (its CONNECT needs the API
      // methods the index adds to every dispatcher).
      const { ProxyAgent } = await import("undici");
      // An https:// proxy is verified as Go's clients verify it: with the cluster's TLS
      // settings (its CA, client certificate, insecure-skip-tls-verify), not the system's
      // roots; checked against the proxy's own name.
      const { servername: _servername, ...proxyTls } = tls;
      dispatcher = new ProxyAgent({
        ...options,
        uri: proxy,
        requestTls: connect,
        ...(proxy.startsWith("https:") ? { proxyTls } : {}),
      }) as unknown as ClosableDispatcher;
    } else {
      dispatcher = new Pool(url.origin, { ...options, connect });
    }
    // A failed connection fails its requests; the dispatcher itself needs no listener.
    dispatcher.on("connectionError", () => undefined);
    const g: Generation = {
      dispatcher,
      tls,
      generation: ++this.generations,
      origin: url.origin,
      prefix: url.pathname.replace(/\/+$/, ""),
      servername: typeof tls.servername === "string" ? tls.servername : undefined,
    };
    dispatcher.on("disconnect", (_origin: unknown, _targets: unknown, err: unknown) => {
      if (/GOAWAY/.test(String((err as Error | undefined)?.message))) this.retire(g);
    });
    // Two requests racing to connect keep the first dispatcher.
    if (this.current && usable(this.current)) {
      void dispatcher.close();
      return this.current;
    }
    this.current = g;
    return g;
  }
}

function usable(g: Generation): boolean {
  return !g.dispatcher.closed && !g.dispatcher.destroyed;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((v, i) => sameValue(v, b[i]));
  }
  return a === b;
}
