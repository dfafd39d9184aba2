/**
 * How every request and watch of a {@link KubeClient} reaches the API server: one undici
 * dispatcher per kubeconfig object. HTTP/2 when the server offers it (ALPN), HTTP/1.1
 * otherwise, plain HTTP for an http:// server; streams of one HTTP/2 connection while
 * the server's stream limit allows, another connection when it does not (never a
 * silent queue); through the cluster's `proxy-url` or the environment's proxy
 * (kube-proxy.ts); the server URL's path kept as a prefix of every path.
 *
 * Dead connections: an HTTP/2 PING every 15 s, a connection whose PING is still
 * unanswered at the next one is torn down (client-go: 15 s ping after 30 s read-idle);
 * TCP keepalive after 30 s idle; ordinary requests time out (`requestTimeoutMs`, as
 * the API server's own 60 s), watches only by the informer's watchdog, which calls
 * {@link KubeTransport.drop} with the generation a silent watch ran on. After a GOAWAY
 * new requests go to a new dispatcher while the old one's watches finish.
 *
 * Credentials come from a {@link KubeConfigLike} on every request: client-node's
 * `KubeConfig` (any auth it supports) or the operator's lean loader (kube-config.ts).
 * Bearer tokens are headers set per request; new TLS material (a rotated client
 * certificate or CA) makes a new dispatcher, the old one closes once its requests end.
 */
import { StringDecoder } from "node:string_decoder";
import type { Dispatcher } from "undici";
import Pool from "undici/lib/dispatcher/pool.js";
import {
  applyRequestOptions,
  invalidateCredentials,
  type KubeConfigLike,
} from "./kube-credentials.js";
import { proxyFor } from "./kube-proxy.js";
import { operatorUserAgent } from "./user-agent.js";

export type { KubeConfigLike } from "./kube-credentials.js";

/** An answer: the HTTP status, the body's text, and its Retry-After header if any. */
export interface KubeHttpAnswer {
  status: number;
  text: string;
  retryAfter?: string | undefined;
}

/** A watch under way; `abort` ends it without calling its done callback. */
export interface KubeStream {
  abort(): void;
}

/** An error of a watch the server answered with a status other than 200 (410: Gone). */
export class WatchStatusError extends Error {
  readonly statusCode: number;
  constructor(status: number, text: string) {
    super(`watch answered ${status}: ${text.slice(0, 300)}`);
    this.name = "WatchStatusError";
    this.statusCode = status;
  }
}

/** Options of a {@link KubeTransport}. */
export interface KubeTransportOptions {
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

interface Generation {
  dispatcher: ClosableDispatcher;
  tls: Record<string, unknown>;
  generation: number;
  origin: string;
  /** The server URL's path ("" or e.g. `/k8s/clusters/c-abc`). */
  prefix: string;
  servername: string | undefined;
}

/** One dispatcher at a time, shared by every request of a kubeconfig. See the module comment. */
export class KubeTransport {
  private current: Generation | undefined;
  private generations = 0;
  private readonly userAgent: string;
  private readonly requestTimeoutMs: number;

  constructor(
    private readonly config: KubeConfigLike,
    private readonly options: KubeTransportOptions = {},
  ) {
    this.userAgent = options.userAgent ?? operatorUserAgent();
    this.requestTimeoutMs = options.requestTimeoutMs ?? 60_000;
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

  /**
   * Makes the next request fetch its credentials anew (a token file read again, an exec
   * plugin run again); false when the kubeconfig has none that could have changed.
   */
  refreshCredentials(): boolean {
    return invalidateCredentials(this.config);
  }

  /** Sends one request; resolves with its status and body (any status). */
  async request(
    method: string,
    path: string,
    body?: string,
    contentType?: string,
  ): Promise<KubeHttpAnswer> {
    const { g, headers } = await this.prepare();
    if (body !== undefined) headers["content-type"] = contentType ?? "application/json";
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let status = 0;
      let retryAfter: string | undefined;
      g.dispatcher.dispatch(
        {
          origin: g.origin,
          path: g.prefix + path,
          method: method as Dispatcher.HttpMethod,
          headers,
          body: body ?? null,
          servername: g.servername,
          headersTimeout: this.requestTimeoutMs,
          bodyTimeout: this.requestTimeoutMs,
        } as Dispatcher.DispatchOptions,
        {
          onRequestStart() {},
          onResponseStart(_c, code, h) {
            status = code;
            const ra = h["retry-after"];
            retryAfter = Array.isArray(ra) ? ra[0] : ra;
          },
          onResponseData(_c, chunk) {
            chunks.push(chunk);
          },
          onResponseEnd() {
            const text =
              chunks.length === 1
                ? (chunks[0] as Buffer).toString("utf8")
                : Buffer.concat(chunks).toString("utf8");
            resolve({ status, text, retryAfter });
          },
          onResponseError(_c, err) {
            reject(err);
          },
        },
      );
    });
  }

  /**
   * Starts a watch (`path` with `watch=true` in its query): `onLine` gets each line of
   * the stream and may answer an error to end the watch with it; `onDone` is called once
   * when it ends (null for a clean end, else the error; a status other than 200 is a
   * {@link WatchStatusError}). Resolves once the server answered (or the request failed).
   */
  async watch(
    path: string,
    onLine: (line: string) => Error | undefined,
    onDone: (err: unknown) => void,
  ): Promise<KubeStream> {
    const { g, headers } = await this.prepare();
    let finished = false;
    let controller: Dispatcher.DispatchController | undefined;
    const finish = (err: unknown) => {
      if (finished) return;
      finished = true;
      onDone(err);
    };
    const handle: KubeStream = {
      abort: () => {
        finished = true;
        controller?.abort(new Error("watch aborted"));
      },
    };
    return new Promise((resolve) => {
      const decoder = new StringDecoder("utf8");
      let status = 0;
      let pending = "";
      const line = (text: string) => {
        if (finished || text.trim() === "") return;
        const err = onLine(text);
        if (err) {
          finish(err);
          controller?.abort(err);
        }
      };
      g.dispatcher.dispatch(
        {
          origin: g.origin,
          path: g.prefix + path,
          method: "GET",
          headers,
          servername: g.servername,
          headersTimeout: this.requestTimeoutMs,
          bodyTimeout: 0,
        } as Dispatcher.DispatchOptions,
        {
          onRequestStart(c) {
            controller = c;
            if (finished) c.abort(new Error("watch aborted"));
          },
          onResponseStart(_c, code) {
            status = code;
            resolve(handle);
          },
          onResponseData(_c, chunk) {
            pending += decoder.write(chunk);
            if (status !== 200) return;
            let nl = pending.indexOf("\n");
            while (nl >= 0 && !finished) {
              line(pending.slice(0, nl));
              pending = pending.slice(nl + 1);
              nl = pending.indexOf("\n");
            }
          },
          onResponseEnd() {
            pending += decoder.end();
            if (status === 200) {
              line(pending);
              finish(null);
            } else {
              finish(new WatchStatusError(status, pending));
            }
          },
          onResponseError(_c, err) {
            finish(err);
            resolve(handle);
          },
        },
      );
    });
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

  /** The current dispatcher for the request's TLS options (a new one when they changed), and its headers. */
  private async prepare(): Promise<{ g: Generation; headers: Record<string, string> }> {
    const opts: Record<string, unknown> & { headers?: Record<string, unknown>; auth?: string } = {
      headers: {},
    };
    await applyRequestOptions(this.config, opts);
    const tls: Record<string, unknown> = {};
    for (const f of TLS_FIELDS) if (opts[f] !== undefined) tls[f] = opts[f];
    let g = this.current;
    if (g && !usable(g)) g = undefined;
    if (g && !TLS_FIELDS.every((f) => sameValue(g?.tls[f], tls[f]))) {
      // New TLS material: the old dispatcher finishes its requests and closes.
      void g.dispatcher.close();
      g = undefined;
    }
    g ??= await this.connect(tls);
    const headers: Record<string, string> = {
      accept: "application/json",
      "user-agent": this.userAgent,
    };
    for (const [k, v] of Object.entries(opts.headers ?? {})) headers[k.toLowerCase()] = String(v);
    if (opts.auth) headers.authorization = `Basic ${Buffer.from(opts.auth).toString("base64")}`;
    return { g, headers };
  }

  private async connect(tls: Record<string, unknown>): Promise<Generation> {
    const cluster = this.config.getCurrentCluster();
    if (!cluster?.server) throw new Error("the kubeconfig has no current cluster");
    const url = new URL(cluster.server);
    const connect = {
      ...tls,
      // Go's servers prefer h2 too; undici's default offers http/1.1 first.
      preferH2: true,
      keepAlive: true,
      keepAliveInitialDelay: 30_000,
      timeout: 30_000,
    };
    const options = {
      allowH2: true,
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
      dispatcher = new ProxyAgent({
        ...options,
        uri: proxy,
        requestTls: connect,
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
