/**
 * The service exchange through node-fetch (`service.httpClient: node-fetch`), the same
 * contract as {@link exchange} in http-exchange.ts: no redirect followed (a 3xx comes
 * back with its Location and its body unread), the body cut off past `maxBytes`
 * ({@link ResponseTooLargeError}), the attempt bounded by `timeoutMs` (an error named
 * `TimeoutError`) and by the caller's signal (`AbortError`), network failures with
 * Node's error `code` (ECONNREFUSED...), a compressed answer decoded. node-fetch's web
 * objects (Request, Headers, Body, a stream pipeline and the abort signals) cost about
 * three times the CPU of the plain exchange per request (docs/performance.md, "The
 * service's HTTP client, and workers"), which is why `node-http` is the default.
 */
import type { Readable } from "node:stream";
import fetch, { FetchError } from "node-fetch";
import {
  type ExchangeAnswer,
  type ExchangeRequest,
  named,
  parseRetryAfter,
  ResponseTooLargeError,
} from "./http-exchange.js";

/** Sends one request through node-fetch and reads its answer; see the module comment. */
export async function fetchExchange(r: ExchangeRequest): Promise<ExchangeAnswer> {
  const timeout = AbortSignal.timeout(r.timeoutMs);
  const signal = r.signal ? AbortSignal.any([timeout, r.signal]) : timeout;
  try {
    const res = await fetch(r.url, {
      method: r.method,
      headers: r.headers,
      body: r.body,
      agent: r.agent,
      signal,
      redirect: "manual",
      size: r.maxBytes,
    });
    const location = res.headers.get("location");
    const retryAfterMs = parseRetryAfter(res.headers.get("retry-after"));
    if (res.status >= 300 && res.status < 400) {
      // Not read: a hostile redirect may carry an endless body.
      (res.body as Readable | null)?.destroy();
      return { httpStatus: res.status, bodyText: "", location, retryAfterMs };
    }
    return { httpStatus: res.status, bodyText: await res.text(), location, retryAfterMs };
  } catch (err) {
    if (err instanceof FetchError && err.type === "max-size") {
      throw new ResponseTooLargeError(r.maxBytes);
    }
    if (err instanceof Error && err.name === "AbortError") {
      throw r.signal?.aborted
        ? named("AbortError", "the call was aborted", r.signal.reason)
        : named("TimeoutError", `no answer within ${r.timeoutMs} ms`, err);
    }
    if (err instanceof FetchError && (err.code ?? err.errno)) {
      // The system error's own message, as the plain exchange's (node-fetch puts the URL before it).
      const message = err.message.replace(/^request to \S+ failed, reason: /, "");
      throw Object.assign(new Error(message, { cause: err }), { code: err.code ?? err.errno });
    }
    throw err;
  }
}
