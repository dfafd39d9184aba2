/**
 * The connections of a transport (kube-transport.ts): one undici dispatcher at a time
 * for the kubeconfig's current cluster, a new one when there is none or the TLS
 * material changed. HTTP/2 when the server offers it (ALPN), else HTTP/1.1 (plain for
 * http://); another connection when the server's stream limit is reached (never a
 * silent queue); the cluster's `proxy-url` or the environment's proxy (kube-proxy.ts):
 * undici's ProxyAgent for an http(s) one, tunnels of kube-socks.ts for a socks5 one.
 * A connection whose HTTP/2 PING (every 15 s) is unanswered at the next one is torn
 * down, as client-go does; after a GOAWAY the dispatcher is retired ({@link retire}), and
 * the requests the server left unprocessed go out again on the current one.
 */
import type { buildConnector, Dispatcher } from "undici";
import Pool from "undici/lib/dispatcher/pool.js";
import { directConnector } from "./kube-connector.js";
import { type KubeConfigLike, type RequestCredentials, sameTls } from "./kube-credentials.js";
import { proxyFor, unbracketed } from "./kube-proxy.js";
import { socksConnector } from "./kube-socks.js";
import { ProxyConnectError, tunnelRefusal } from "./proxy-errors.js";

/** Options of the connections of a transport (and of the transport). */
export interface KubeConnectionOptions {
  /** Default `operatorUserAgent()` (user-agent.ts). */
  userAgent?: string;
  /** Headers and body-idle timeout of a request other than a watch. Default 60 s. */
  requestTimeoutMs?: number;
  /** HTTP/2 PING interval. Default 15 s. */
  pingIntervalMs?: number;
  /** Where HTTPS_PROXY and friends are read (default the config's `proxyEnv`, else `process.env`). */
  env?: NodeJS.ProcessEnv;
}

/** Streams of one HTTP/2 connection at most (the server's SETTINGS lower it). */
const MAX_STREAMS = 1_000;

/**
 * Aborts a request about to be written on a dispatcher retired after a GOAWAY (undici
 * sends there the requests the GOAWAY left unprocessed, and those queued behind them);
 * the transport sends it to the current one instead, at most {@link MAX_RESENDS} times.
 * The second HTTP/2 session undici opens for them carries no stream, so no answer brings
 * it a GOAWAY: undici 8 takes one there as one for every stream of the connection, and
 * would send again the requests of the first session still awaiting their answer. One it
 * still gets (the server closing it idle) ends the first session's watches, which resume
 * as after a cut (`isConnectionReset`).
 */
export class ResendError extends Error {}
export const MAX_RESENDS = 3;

/** The longest a dispatcher left after a GOAWAY finishes its requests (watches: 5-10 min). */
const RETIRED_MAX_MS = 11 * 60_000;

/** undici's Pool and ProxyAgent (both a DispatcherBase) tell whether they were closed. */
type ClosableDispatcher = Dispatcher & { readonly closed: boolean; readonly destroyed: boolean };

/** One dispatcher and where its requests go. */
export interface Generation {
  dispatcher: ClosableDispatcher;
  /** The TLS options it was made with (new ones make a new dispatcher). */
  tls: Record<string, unknown>;
  generation: number;
  origin: string;
  /** The server URL's path ("" or e.g. `/k8s/clusters/c-abc`). */
  prefix: string;
  servername: string | undefined;
  /** Set at its GOAWAY: requests it has not begun go to the current one (kube-transport.ts). */
  retired?: boolean;
}

/**
 * The dispatchers of one transport: {@link current}, where requests and watches go,
 * numbered by generation so that one a watch got no answer on can be dropped.
 */
export class KubeConnections {
  /** Where requests go now; undefined before the first and after a drop or GOAWAY. */
  current: Generation | undefined;
  private generations = 0;
  /** The dispatcher being made, if any: requests that find none at once share it. */
  private connecting: Promise<Generation> | undefined;

  constructor(
    private readonly config: KubeConfigLike,
    private readonly options: KubeConnectionOptions,
  ) {}

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
    void g.dispatcher.destroy(new Error("connection dropped: a watch on it got no answer"));
    return true;
  }

  /** Closes the dispatcher once its requests end. */
  async close(): Promise<void> {
    const g = this.current;
    this.current = undefined;
    await g?.dispatcher.close();
  }

  /**
   * The dispatcher for credentials `c` when {@link current} is closed or was made with
   * other TLS options: the current one if they hold the same material (kept: later
   * requests match it by identity), else a new one (the old closes once its requests end).
   */
  async renew(c: RequestCredentials): Promise<Generation> {
    let g = this.current;
    if (g && (g.dispatcher.closed || g.dispatcher.destroyed)) g = undefined;
    if (g && g.tls !== c.tls) {
      if (sameTls(g.tls, c.tls)) g.tls = c.tls;
      else void g.dispatcher.close();
      if (g.tls !== c.tls) g = undefined;
    }
    if (g) return g;
    this.connecting ??= this.make(c).finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async make(c: RequestCredentials): Promise<Generation> {
    const g = await connect(
      this.config,
      this.options,
      c.tls,
      c.allowH2,
      ++this.generations,
      (old) => {
        if (this.current !== old) return;
        this.current = undefined;
        retire(old);
      },
    );
    this.current = g;
    return g;
  }
}

/**
 * A new dispatcher, number `generation`, for `config`'s current cluster with the TLS
 * options `tls`; HTTP/1.1 only unless `allowH2`. `onGoaway` is called when the server
 * sends it a GOAWAY (see {@link retire}).
 */
export async function connect(
  config: KubeConfigLike,
  options: KubeConnectionOptions,
  tls: Record<string, unknown>,
  allowH2: boolean,
  generation: number,
  onGoaway: (g: Generation) => void,
): Promise<Generation> {
  const cluster = config.getCurrentCluster();
  if (!cluster?.server) throw new Error("the kubeconfig has no current cluster");
  const url = new URL(cluster.server);
  const timeoutMs = options.requestTimeoutMs ?? 60_000;
  const connect = {
    ...tls,
    // The ALPN offer of every TLS connection, a SOCKS5 tunnel's too (undici's connector
    // would offer h2, which the API server picks). Go's servers prefer h2 too; undici's
    // default offers http/1.1 first.
    allowH2,
    preferH2: allowH2,
    keepAlive: true,
    keepAliveInitialDelay: 30_000,
    timeout: 30_000,
  };
  const dispatcherOptions = {
    allowH2,
    // An idle connection is kept, not reopened per burst; closed before the API
    // server's own 90 s idle timeout would close it under a request.
    keepAliveTimeout: 60_000,
    keepAliveMaxTimeout: 600_000,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    // The server's SETTINGS lower this; streams beyond it open another connection.
    h2Options: {
      pingInterval: options.pingIntervalMs ?? 15_000,
      maxConcurrentStreams: MAX_STREAMS,
    },
  };
  const env = options.env ?? config.proxyEnv ?? process.env;
  const proxy = proxyFor(url, cluster.proxyUrl, env);
  // Set once the generation is made (a GOAWAY comes later).
  let g: Generation | undefined;
  const onDisconnect = (_origin: unknown, targets: unknown, err: unknown) => {
    if (!g || !/GOAWAY/.test(String((err as Error | undefined)?.message))) return;
    g.retired = true;
    // undici puts back the requests the server left unprocessed (streams after the
    // GOAWAY's last one) and, one request at a time once the session is gone, holds
    // them until the old session's streams end, watches included: a new one for them.
    for (const client of targets as object[]) {
      if ("pipelining" in client) client.pipelining = MAX_STREAMS;
    }
    onGoaway(g);
  };
  let dispatcher: ClosableDispatcher;
  const where = cluster.proxyUrl
    ? "the kubeconfig's proxy-url"
    : `${url.protocol === "https:" ? "HTTPS" : "HTTP"}_PROXY`;
  if (proxy?.startsWith("socks5:")) {
    // Loaded only for a socks5 proxy: undici's index, for its TLS connector.
    const { buildConnector } = (await import("undici")).default;
    const secure = buildConnector(connect);
    const tunnels = socksConnector(proxy, where, secure, connect.keepAliveInitialDelay);
    dispatcher = new Pool(url.origin, { ...dispatcherOptions, connect: tunnels });
    dispatcher.on("disconnect", onDisconnect);
  } else if (proxy) {
    // Loaded only when a proxy is named: undici's index (its CONNECT needs the API
    // methods the index adds to every dispatcher). It is CommonJS: bundled
    // (scripts/bundle-dist.ts) its exports are only the module's default export.
    const { ProxyAgent } = (await import("undici")).default;
    // An https:// proxy is verified as Go's clients verify it: with the cluster's TLS
    // settings (its CA, client certificate, insecure-skip-tls-verify), not the system's
    // roots; checked against the proxy's own name or address (undici would check an
    // IPv6 address with its URL brackets, as a name).
    const { servername: _servername, ...clusterTls } = tls;
    const proxyTls = { ...clusterTls, servername: unbracketed(new URL(proxy).hostname) };
    // A connection to the proxy that fails, or a tunnel it refuses, says it is the
    // proxy's and whose setting (never a TLS error of the server inside a tunnel).
    const toProxy = (o: Pool.Options, all: boolean): Pool.Options => {
      const c = o.connect as buildConnector.connector;
      return {
        ...o,
        connect: (options, callback) =>
          c(options, (err, socket) => {
            if (!err) callback(null, socket as NonNullable<typeof socket>);
            else if (all || tunnelRefusal(err))
              callback(new ProxyConnectError(proxy, where, err), null);
            else callback(err, null);
          }),
      };
    };
    const proxyOrigin = new URL(proxy).origin;
    dispatcher = new ProxyAgent({
      ...dispatcherOptions,
      // The pool of its CONNECTs to the proxy.
      clientFactory: (origin: URL, o: Pool.Options) => new Pool(origin, toProxy(o, true)),
      // The pools of its tunnels, which it does not tell of their disconnects, and for an
      // http:// server the proxy's own (requests in absolute form).
      factory: (origin: string, o: Pool.Options) =>
        new Pool(origin, toProxy(o, new URL(origin).origin === proxyOrigin)).on(
          "disconnect",
          onDisconnect,
        ),
      uri: proxy,
      requestTls: connect,
      ...(proxy.startsWith("https:") ? { proxyTls } : {}),
    }) as unknown as ClosableDispatcher;
  } else {
    dispatcher = new Pool(url.origin, { ...dispatcherOptions, connect: directConnector(connect) });
    dispatcher.on("disconnect", onDisconnect);
  }
  // A failed connection fails its requests; the dispatcher itself needs no listener.
  dispatcher.on("connectionError", () => undefined);
  g = {
    dispatcher,
    tls,
    generation,
    origin: url.origin,
    prefix: url.pathname.replace(/\/+$/, ""),
    servername: typeof tls.servername === "string" ? tls.servername : undefined,
  };
  return g;
}

/**
 * Retires `g` after a GOAWAY (the API server answers a refused token with one, and
 * sends them to rebalance with --goaway-chance): undici's connection would hold new
 * requests until every stream left on the old session ended, watches included. It
 * closes once its requests end (the informers' watches end within 10 min), and is
 * destroyed if they have not by {@link RETIRED_MAX_MS}; the caller sends new requests
 * to a new dispatcher.
 */
export function retire(g: Generation): void {
  void g.dispatcher.close();
  setTimeout(() => {
    if (!g.dispatcher.destroyed) void g.dispatcher.destroy(new Error("connection retired"));
  }, RETIRED_MAX_MS).unref();
}
