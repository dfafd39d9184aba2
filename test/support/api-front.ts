import { mkdtemp, readFile, rm } from "node:fs/promises";
import {
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
  STATUS_CODES,
} from "node:http";
import {
  constants,
  createSecureServer,
  type Http2ServerRequest,
  type Http2ServerResponse,
} from "node:http2";
import { Agent, createServer as createHttpsServer, request } from "node:https";
import type { AddressInfo, Server, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as k8s from "@kubernetes/client-node";
import { generateCerts } from "../../src/controlplane/certs.js";

/** The first `times` requests that `match` are answered 429 with `Retry-After`. */
export interface FrontThrottle {
  match(method: string, path: string, query: URLSearchParams): boolean;
  times: number;
  retryAfterSeconds: number;
}

/** Options of an {@link ApiFront}. */
export interface ApiFrontOptions {
  /** The API server behind it and the admin's credentials (a client certificate). */
  upstream: k8s.KubeConfig;
  /** The protocols the front offers in ALPN: HTTP/1.1 only, or HTTP/2 and HTTP/1.1. */
  protocols: "http/1.1" | "h2,http/1.1";
  /** The path the API is served under (`/k8s/clusters/c-abc`); default none. */
  prefix?: string;
  /**
   * What it answers outside its prefix: nginx's 404 page (default), a web UI's page with
   * 200 (Rancher's UI at its root), or 200 without a body (Caddy, where no route matches).
   */
  outsidePrefix?: "notFound" | "page" | "empty";
  /** The bearer token clients must send; default none asked for. */
  token?: string;
  throttle?: FrontThrottle;
  /**
   * Closes a client's connection (no last chunk) once the API server's answer sent
   * nothing for this long, headers included, as nginx's `proxy_read_timeout` and
   * haproxy's `timeout server` do (60 s and 50 s in their shipped configs).
   */
  idleTimeoutMs?: number;
  /**
   * Holds back a watch's answer, headers and events, until the API server ends it, as
   * nginx 1.22 does over HTTP/1.1 with `proxy_buffering` on (its default); `"events"`:
   * the headers pass at once, the events are held (a buffering HTTP/2 front).
   */
  holdWatches?: boolean | "events";
  /**
   * With `holdWatches`: when the idle timeout cuts a held watch, its headers and the first
   * this many bytes of its events pass before the cut, the rest is lost (`Infinity`: all
   * of it, as nginx 1.22 lets a quiet watch's held events through at `proxy_read_timeout`).
   * Default none: nothing of a held watch passes.
   */
  heldWatchFlushBytes?: number;
  /** How long each request waits before it is served (a slow API server); default 0. */
  delayMs?: number;
  /** Passes the events of the watches whose path `match`es this many ms late, in order. */
  lateWatchEvents?: { match(path: string): boolean; ms: number };
}

/** One request the front saw. */
export interface FrontRequest {
  method: string;
  /** The path as the client sent it, without the query. */
  path: string;
  query: URLSearchParams;
  httpVersion: string;
  userAgent: string | undefined;
  /** The status the front answered, or the API server's. */
  status: number;
  /** When it arrived (Date.now()). */
  at: number;
}

/** Headers not forwarded either way (hop-by-hop, HTTP/2 pseudo-headers, credentials). */
const DROPPED = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
  "host",
  "http2-settings",
  "authorization",
]);

type FrontReq = IncomingMessage | Http2ServerRequest;

const INTERNAL_ERROR = constants.NGHTTP2_INTERNAL_ERROR;

/**
 * A loopback TLS front of a real API server, as auth proxies and cluster gateways are:
 * it offers the protocols it is told in ALPN, serves the API under a path prefix, asks
 * for a bearer token of its own, and forwards each request (streaming, so watches work)
 * to the API server with the admin's client certificate. It can answer the first
 * requests of a path `429 Too Many Requests` with `Retry-After`, cut answers gone idle
 * and hold back watches' answers, as nginx and haproxy do, cut an answer the API server
 * cut, and hold each request `delayMs` first. It records every request, and counts the
 * most under way at once.
 * Its certificate is its own (CA in {@link caCert}), valid for 127.0.0.1 and localhost.
 */
export class ApiFront {
  private server?: Server;
  private dir = "";
  private agent?: Agent;
  private readonly sockets = new Set<Socket>();
  private throttled = 0;
  private inFlight = 0;
  /** The most requests other than watches under way at once so far. */
  maxInFlight = 0;
  /** The CA of the front's serving certificate (PEM). */
  caCert: Buffer = Buffer.alloc(0);
  /** Every request so far. */
  readonly requests: FrontRequest[] = [];

  constructor(private readonly options: ApiFrontOptions) {}

  /** Makes the certificates and listens on a free loopback port. */
  async start(): Promise<this> {
    this.dir = await mkdtemp(join(tmpdir(), "aidc-api-front-"));
    const certs = await generateCerts(this.dir);
    const [key, cert, ca] = await Promise.all([
      readFile(certs.serverKey),
      readFile(certs.serverCert),
      readFile(certs.caCert),
    ]);
    this.caCert = ca;
    const up = this.options.upstream;
    const user = up.getCurrentUser();
    const cluster = up.getCurrentCluster();
    if (!cluster || !user?.certData || !user.keyData || !cluster.caData) {
      throw new Error("the upstream kubeconfig needs a CA and a client certificate inline");
    }
    this.agent = new Agent({
      keepAlive: true,
      ca: Buffer.from(cluster.caData, "base64"),
      cert: Buffer.from(user.certData, "base64"),
      key: Buffer.from(user.keyData, "base64"),
    });
    const server =
      this.options.protocols === "http/1.1"
        ? createHttpsServer({ key, cert, ALPNProtocols: ["http/1.1"] }, (req, res) =>
            this.handle(req, res),
          )
        : // The compatibility API answers HTTP/2 with the methods of an HTTP/1.1 response.
          createSecureServer({ key, cert, allowHTTP1: true }, (req, res) =>
            this.handle(req, res as unknown as ServerResponse),
          );
    server.on("connection", (s: Socket) => {
      this.sockets.add(s);
      s.on("close", () => this.sockets.delete(s));
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return this;
  }

  /** A KubeConfig of a client of the front: its URL and CA, no credentials. */
  kubeConfig(): k8s.KubeConfig {
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: "front", server: this.url, caData: this.caCert.toString("base64") }],
      users: [{ name: "front" }],
      contexts: [{ name: "front", cluster: "front", user: "front" }],
      currentContext: "front",
    });
    return kc;
  }

  /** Client connections open right now. */
  get openConnections(): number {
    return this.sockets.size;
  }

  /** `https://127.0.0.1:<port>` plus the prefix: the server URL of a kubeconfig. */
  get url(): string {
    const addr = this.server?.address() as AddressInfo | undefined;
    return `https://127.0.0.1:${addr?.port ?? 0}${this.options.prefix ?? ""}`;
  }

  /** Closes the front, every connection it holds, and removes its certificates. */
  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    this.agent?.destroy();
    const server = this.server;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
  }

  private handle(req: FrontReq, res: ServerResponse): void {
    if (!req.url?.includes("watch=true")) {
      this.inFlight += 1;
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
      res.on("close", () => {
        this.inFlight -= 1;
      });
    }
    const delayMs = this.options.delayMs ?? 0;
    if (delayMs > 0) setTimeout(() => this.serve(req, res), delayMs);
    else this.serve(req, res);
  }

  private serve(req: FrontReq, res: ServerResponse): void {
    const url = new URL(req.url ?? "/", "https://front.invalid");
    const seen: FrontRequest = {
      method: req.method ?? "",
      path: url.pathname,
      query: url.searchParams,
      httpVersion: req.httpVersion,
      userAgent: req.headers["user-agent"],
      status: 0,
      at: Date.now(),
    };
    this.requests.push(seen);
    // Its own answers as nginx writes them (a web UI's page for a 200): an HTML page
    // without the Audit-Id header of the API server's answers.
    const answer = (status: number, headers: Record<string, string> = {}) => {
      seen.status = status;
      const title = `${status} ${STATUS_CODES[status] ?? ""}`;
      res.writeHead(status, { "content-type": "text/html", ...headers });
      res.end(
        `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`,
      );
    };
    const { prefix = "", token, throttle } = this.options;
    if (token !== undefined && req.headers.authorization !== `Bearer ${token}`) {
      answer(401);
      return;
    }
    if (prefix && !url.pathname.startsWith(`${prefix}/`)) {
      const outside = this.options.outsidePrefix;
      if (outside === "empty") {
        seen.status = 200;
        res.writeHead(200, { server: "Caddy" }).end();
      } else answer(outside === "page" ? 200 : 404);
      return;
    }
    const path = url.pathname.slice(prefix.length);
    if (
      throttle &&
      this.throttled < throttle.times &&
      throttle.match(seen.method, path, url.searchParams)
    ) {
      this.throttled += 1;
      answer(429, { "retry-after": String(throttle.retryAfterSeconds) });
      return;
    }
    // As nginx cuts: the HTTP/1.1 connection closed, the HTTP/2 stream reset.
    const close = () => {
      if ("stream" in res) (res as unknown as Http2ServerResponse).stream.close(INTERNAL_ERROR);
      else res.destroy();
    };
    // What a cut lets through first: set for a held watch.
    let flushHeld: ((then: () => void) => void) | undefined;
    const cut = () => (flushHeld ? flushHeld(close) : close());
    // The answer's idle timeout, armed again whenever the API server sends something.
    const timeoutMs = this.options.idleTimeoutMs;
    let idleTimer: NodeJS.Timeout | undefined;
    const idle = () => {
      clearTimeout(idleTimer);
      if (timeoutMs) idleTimer = setTimeout(cut, timeoutMs);
    };
    idle();
    res.on("close", () => clearTimeout(idleTimer));
    let clientGone = false;
    const upstream = new URL(this.options.upstream.getCurrentCluster()?.server ?? "");
    const out = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: seen.method,
        path: `${path}${url.search}`,
        headers: forwarded(req.headers),
        agent: this.agent,
      },
      (up) => {
        seen.status = up.statusCode ?? 0;
        up.on("data", idle);
        // The API server's answer cut (it went away under a watch): so is the client's.
        up.on("close", () => {
          if (!up.complete && !clientGone) cut();
        });
        const hold = this.options.holdWatches;
        if (hold && url.searchParams.get("watch") === "true") {
          const held: Buffer[] = [];
          up.on("data", (chunk: Buffer) => held.push(chunk));
          const head = () => {
            if (!res.headersSent) res.writeHead(seen.status, forwarded(up.headers));
          };
          if (hold === "events") {
            head();
            res.flushHeaders();
          }
          const flushBytes = this.options.heldWatchFlushBytes;
          if (flushBytes !== undefined) {
            flushHeld = (then) => {
              head();
              res.write(Buffer.concat(held).subarray(0, flushBytes), then);
            };
          }
          up.on("end", () => {
            head();
            res.end(Buffer.concat(held));
          });
          return;
        }
        // The headers at once, as the API server sends them, then chunk by chunk: a
        // watch's events pass as they come (or `lateWatchEvents.ms` later).
        res.writeHead(seen.status, forwarded(up.headers)).flushHeaders();
        const late = this.options.lateWatchEvents;
        if (late && url.searchParams.get("watch") === "true" && late.match(path)) {
          up.on("data", (chunk: Buffer) => setTimeout(() => res.write(chunk), late.ms));
          up.on("end", () => setTimeout(() => res.end(), late.ms));
          return;
        }
        up.pipe(res);
      },
    );
    out.on("error", () => {
      if (!res.headersSent) answer(502);
      else res.destroy();
    });
    // The client went away (a watch ended): so does the request to the API server.
    res.on("close", () => {
      clientGone = true;
      out.destroy();
    });
    req.pipe(out);
  }
}

function forwarded(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || name.startsWith(":") || DROPPED.has(name)) continue;
    out[name] = value;
  }
  return out;
}
