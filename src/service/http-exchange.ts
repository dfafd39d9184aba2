/**
 * One HTTP/1.1 exchange with the service (the default `service.httpClient`) and its
 * keep-alive agents. No redirect is followed (a 3xx comes back unread), the body is cut
 * off past `maxBytes`, the attempt is bounded by `timeoutMs` (`TimeoutError`) and the
 * caller's signal (`AbortError`), network errors keep Node's `code`. The agents never
 * hand out a socket the server may be closing (for a create, an unknown outcome).
 */
import http, { Agent as HttpAgent, type IncomingMessage } from "node:http";
import https, { Agent as HttpsAgent } from "node:https";
import type { Socket } from "node:net";
import type { Duplex, Readable } from "node:stream";
import zlib from "node:zlib";
import { type NamedProxy, type ProxyAgentOptions, socksAgentClass } from "./service-proxy.js";

export interface ExchangeRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
  agent: http.Agent;
  timeoutMs: number;
  maxBytes: number;
  signal: AbortSignal | undefined;
  /**
   * Asked once the socket is connected, right before the bytes are written: false leaves
   * the request unsent (`NotSentError`), so a process paused meanwhile does not send it
   * after its Lease passed on. Asked by this exchange only (node-fetch's sends as it connects).
   */
  mayCall?: () => boolean;
}

/** The answer: status, two headers, and the body (empty for a 3xx). */
export interface ExchangeAnswer {
  httpStatus: number;
  bodyText: string;
  location: string | null;
  /** Retry-After in ms, when it was a number of seconds. */
  retryAfterMs: number | undefined;
}

/** Retry-After in seconds as ms; undefined when absent or in another form. */
export function parseRetryAfter(value: string | null): number | undefined {
  if (value === null || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value.trim()) * 1000;
}

export class ResponseTooLargeError extends Error {
  constructor(maxBytes: number) {
    super(`the body is longer than ${maxBytes} bytes`);
    this.name = "ResponseTooLargeError";
  }
}

/** An error named `TimeoutError`, `AbortError`..., as both exchanges throw them. */
export function named(name: string, message: string, cause?: unknown): Error {
  const err = new Error(message, cause === undefined ? undefined : { cause });
  err.name = name;
  return err;
}

function header(res: IncomingMessage, name: string): string | null {
  const v = res.headers[name];
  return v === undefined ? null : Array.isArray(v) ? v.join(", ") : v;
}

function decoded(res: IncomingMessage): Readable {
  switch (header(res, "content-encoding")?.trim().toLowerCase()) {
    case "gzip":
    case "x-gzip":
      return res.pipe(zlib.createGunzip());
    case "deflate":
      return res.pipe(zlib.createInflate());
    case "br":
      return res.pipe(zlib.createBrotliDecompress());
    default:
      return res;
  }
}

export function exchange(r: ExchangeRequest): Promise<ExchangeAnswer> {
  return new Promise((resolve, reject) => {
    if (r.signal?.aborted) {
      reject(named("AbortError", "the call was aborted", r.signal.reason));
      return;
    }
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const onAbort = () => fail(named("AbortError", "the call was aborted", r.signal?.reason));
    const finish = () => {
      settled = true;
      clearTimeout(timer);
      r.signal?.removeEventListener("abort", onAbort);
    };
    const fail = (err: Error) => {
      if (settled) return;
      finish();
      req.destroy();
      reject(err);
    };
    const headers: Record<string, string | number> = { ...r.headers };
    if (r.body !== undefined) headers["Content-Length"] = Buffer.byteLength(r.body);
    const send = r.url.startsWith("https:") ? https.request : http.request;
    const req = send(r.url, { method: r.method, headers, agent: r.agent }, (res) => {
      const status = res.statusCode ?? 0;
      const location = header(res, "location");
      const retryAfterMs = parseRetryAfter(header(res, "retry-after"));
      if (status >= 300 && status < 400) {
        // Not read: a hostile redirect may carry an endless body.
        finish();
        res.destroy();
        resolve({ httpStatus: status, bodyText: "", location, retryAfterMs });
        return;
      }
      const body = decoded(res);
      const chunks: Buffer[] = [];
      let size = 0;
      body.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > r.maxBytes) {
          body.destroy();
          fail(new ResponseTooLargeError(r.maxBytes));
          return;
        }
        chunks.push(chunk);
      });
      body.on("end", () => {
        if (settled) return;
        finish();
        resolve({
          httpStatus: status,
          bodyText: Buffer.concat(chunks, size).toString("utf8"),
          location,
          retryAfterMs,
        });
      });
      body.on("error", (err) => fail(err));
      res.on("error", (err) => fail(err));
      res.on("close", () => {
        if (!res.complete) {
          fail(
            Object.assign(new Error("the connection closed before the answer ended"), {
              code: "ECONNRESET",
            }),
          );
        }
      });
    });
    req.on("error", (err) => fail(err));
    timer = setTimeout(
      () => fail(named("TimeoutError", `no answer within ${r.timeoutMs} ms`)),
      r.timeoutMs,
    );
    r.signal?.addEventListener("abort", onAbort, { once: true });
    const { mayCall } = r;
    if (!mayCall) {
      req.end(r.body);
      return;
    }
    req.once("socket", (socket: Socket) => {
      let asked = false;
      const send = () => {
        if (asked) return;
        asked = true;
        if (mayCall()) req.end(r.body);
        else fail(named("NotSentError", "the call was stopped before it was sent"));
      };
      if (!socket.connecting) send();
      // A TLS socket over a tunnel may say only secureConnect.
      else for (const event of ["connect", "secureConnect"]) socket.once(event, send);
    });
  });
}

/** When each pooled socket last became free (`performance.now()`). */
const freedAt = new WeakMap<object, number>();

type AgentClass = typeof HttpAgent;

/**
 * How long a socket may have been idle to carry a request that is not idempotent. A front
 * may close idle sockets sooner than `idleSocketTimeoutMs` (nginx `keepalive_timeout 2s`),
 * and a create written on one it just closed has an unknown outcome.
 */
export const UNSAFE_REQUEST_IDLE_MS = 1000;

const IDEMPOTENT_METHODS = new Set(["GET", "HEAD", "PUT", "DELETE", "OPTIONS"]);

/** An agent class whose free sockets are closed after `idleSocketTimeoutMs`. */
function idleBounded<C extends AgentClass>(Base: C, idleSocketTimeoutMs: number): C {
  const unsafeIdleMs = Math.min(idleSocketTimeoutMs, UNSAFE_REQUEST_IDLE_MS);
  // @ts-expect-error: a mixin over the agent constructor
  return class extends Base {
    override keepSocketAlive(socket: Duplex): boolean {
      freedAt.set(socket, performance.now());
      return (HttpAgent.prototype.keepSocketAlive as (s: Duplex) => boolean).call(this, socket);
    }

    addRequest(...args: unknown[]): void {
      const { method = "GET" } = args[0] as { method?: string };
      const idleMs = IDEMPOTENT_METHODS.has(method) ? idleSocketTimeoutMs : unsafeIdleMs;
      dropStaleFreeSockets(this, idleMs, performance.now());
      const base = Base.prototype as unknown as { addRequest: (...a: unknown[]) => void };
      base.addRequest.apply(this, args);
    }
  };
}

/** Destroys and unlists the free sockets of `agent` idle for `idleMs` or more (or destroyed). */
export function dropStaleFreeSockets(agent: HttpAgent, idleMs: number, now: number): number {
  let dropped = 0;
  for (const list of Object.values(agent.freeSockets as Record<string, Socket[] | undefined>)) {
    if (!list) continue;
    for (let i = list.length - 1; i >= 0; i--) {
      const socket = list[i] as Socket;
      const since = freedAt.get(socket);
      if (!socket.destroyed && (since === undefined || now - since < idleMs)) continue;
      list.splice(i, 1);
      socket.destroy();
      dropped++;
    }
  }
  return dropped;
}

export interface IdleBoundedAgents {
  http: HttpAgent;
  https: HttpsAgent;
  /** The proxy every connection goes to (http(s) or SOCKS5); none when direct. */
  proxy?: NamedProxy;
}

/**
 * Keep-alive agents (at most `maxSockets` per origin) that close a socket idle for
 * `idleSocketTimeoutMs` (Node would keep it for ever), below the server's keep-alive
 * timeout: by the agent's `timeout`, and by the wall clock at each new request in case a
 * busy event loop fired that timer late. With `proxy` every connection goes through it.
 */
export function idleBoundedAgents(
  idleSocketTimeoutMs: number,
  maxSockets: number,
  proxy: ProxyAgentOptions = {},
): IdleBoundedAgents {
  const { socks, named, ...nodeProxy } = proxy;
  const options = { keepAlive: true, maxSockets, timeout: idleSocketTimeoutMs, ...nodeProxy };
  const [HttpBase, HttpsBase] =
    socks === undefined
      ? [HttpAgent, HttpsAgent as unknown as AgentClass]
      : [socksAgentClass(socks, false), socksAgentClass(socks, true)];
  const Http = idleBounded(HttpBase, idleSocketTimeoutMs);
  const Https = idleBounded(HttpsBase, idleSocketTimeoutMs);
  const agents = { http: new Http(options), https: new Https(options) as unknown as HttpsAgent };
  return named ? { ...agents, proxy: named } : agents;
}
