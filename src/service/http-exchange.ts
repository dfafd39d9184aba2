/**
 * One HTTP/1.1 exchange with the service over a keep-alive agent (`node:http` or
 * `node:https`), and nothing more: the request is written, the answer's status, the
 * headers the client reads (Location, Retry-After) and its body as text come back.
 * The default exchange: node-fetch's (fetch-exchange.ts) web objects cost about three
 * times its CPU per request (docs/performance.md, "The service's HTTP client, and
 * workers").
 *
 * No redirect is followed (a 3xx comes back with its Location and its body unread),
 * the body is cut off past `maxBytes` ({@link ResponseTooLargeError}), the attempt is
 * bounded by `timeoutMs` (an error named `TimeoutError`) and by the caller's signal (an
 * error named `AbortError`), and network failures keep Node's error `code`
 * (ECONNREFUSED...). A gzip, deflate or br answer is decoded (the limit applies to the
 * decoded body), although the client asks for none.
 */
import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import type { Readable } from "node:stream";
import zlib from "node:zlib";

/** What one exchange needs. */
export interface ExchangeRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
  agent: http.Agent;
  timeoutMs: number;
  maxBytes: number;
  signal: AbortSignal | undefined;
}

/** The answer: status, the two headers the client reads, and the body (empty for a 3xx). */
export interface ExchangeAnswer {
  httpStatus: number;
  bodyText: string;
  location: string | null;
  retryAfter: string | null;
}

/** The answer's body was longer than the limit; it was cut off there. */
export class ResponseTooLargeError extends Error {
  constructor(maxBytes: number) {
    super(`the body is longer than ${maxBytes} bytes`);
    this.name = "ResponseTooLargeError";
  }
}

/** An error with the given `name` (`TimeoutError`, `AbortError`), as both exchanges throw them. */
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

/** Sends one request and reads its answer; see the module comment. */
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
      const retryAfter = header(res, "retry-after");
      if (status >= 300 && status < 400) {
        // Not read: a hostile redirect may carry an endless body.
        finish();
        res.destroy();
        resolve({ httpStatus: status, bodyText: "", location, retryAfter });
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
          retryAfter,
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
    req.end(r.body);
  });
}
