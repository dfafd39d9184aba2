/**
 * The HTTP side of the client: each call's URL (its path's ids checked, then encoded),
 * one exchange per attempt over keep-alive agents (http-exchange.ts) with a timeout,
 * the client-side rate limit, retries with backoff and jitter when a repeat cannot
 * duplicate an effect, a hook per attempt for metrics, and debug logs that carry no
 * header and no key.
 *
 * A hostile or misconfigured service cannot take the key elsewhere or cost unbounded
 * memory: no redirect is followed (a 3xx is an error naming its Location, so the key and
 * the body go only to the configured origin), and a body longer than
 * `maxResponseBytes` is cut off and reported as a malformed answer.
 */
import type { Logger } from "pino";
import type { z } from "zod";
import { backoffDelayMs } from "./backoff.js";
import { type CallContext, UNSCOPED_CALLS } from "./call-context.js";
import type { EndpointName } from "./endpoints.js";
import {
  EndpointDisabledError,
  ServiceAuthError,
  ServiceError,
  ServiceInvalidIdError,
  ServiceInvalidRequestError,
  ServiceThrottledError,
} from "./errors.js";
import { exchange, type IdleBoundedAgents, idleBoundedAgents } from "./http-exchange.js";
import { verdictOfError } from "./operation-availability.js";
import { type CallPriority, priorityOf, realSleep, TokenBucket } from "./rate-limiter.js";
import { type CallDescription, interpretResponse, type RawResponse } from "./response.js";
import { isServiceId, quoteId, SERVICE_ID_RULE } from "./schemas/primitives.js";
import { abandoned, networkError, redirectError, scrub } from "./transport-errors.js";
import { type CallArgs, REDACTED_LOG_PATHS, type TransportOptions } from "./transport-options.js";

/** One call as the transport tracks it: what it is, and its last wait for the rate limit. */
type TransportCall = CallDescription & {
  rateLimitWaitMs: number;
  routineBudgetWaitMs: number;
  priority: CallPriority;
};

/** node-fetch's exchange, imported with the first call that uses it (not at start). */
const fetchExchange: typeof exchange = async (r) =>
  (await import("./fetch-exchange.js")).fetchExchange(r);

/** Executes endpoint calls; one per account (`ServiceAccount`, account.ts). */
export class ServiceTransport {
  private readonly bucket: TokenBucket | null;
  private readonly agents: IdleBoundedAgents;
  private readonly log: Logger | undefined;
  private readonly baseUrl: string;
  private readonly send: typeof exchange;
  /** The key its owner told (`useApiKey`); while none, each attempt asks `options.apiKey`. */
  private apiKey: string | undefined;

  constructor(private readonly options: TransportOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.agents = idleBoundedAgents(options.idleSocketTimeoutMs, 64);
    this.send = options.httpClient === "node-fetch" ? fetchExchange : exchange;
    const sleep = options.sleep ?? realSleep;
    this.bucket = options.rateLimit
      ? new TokenBucket(options.rateLimit, Date.now, sleep, options.routineShare)
      : null;
    this.log = options.logger?.child(
      { component: "service-client" },
      { redact: { paths: REDACTED_LOG_PATHS, censor: "[REDACTED]" } },
    );
  }

  /**
   * Calls endpoint `name` and returns its data parsed by `schema`. Throws
   * `EndpointDisabledError` without a request when the endpoint is disabled, and a
   * `ServiceError` subclass for every failure. Retries only failures that are
   * retryable AND cannot duplicate an effect: any failure of an idempotent endpoint,
   * and for others only those that prove the request was not acted on (connection
   * refused, 429). `context` (the caller's work): routine calls wait behind the others
   * and take the routine budget; its aborted signal stops the call.
   */
  async call<T>(
    name: EndpointName,
    args: CallArgs,
    schema: z.ZodType<T>,
    context: CallContext = UNSCOPED_CALLS,
  ): Promise<T> {
    const def = this.options.endpoints[name];
    if (!def) throw new EndpointDisabledError(name);
    const path = renderPath(name, def.path, args.params);
    const call: TransportCall = {
      endpoint: name,
      where: `${def.method} ${path}`,
      idempotent: def.idempotent,
      rateLimitWaitMs: 0,
      routineBudgetWaitMs: 0,
      priority: priorityOf(context),
    };
    const url = this.baseUrl + path + queryString(args.query);
    const body = args.body === undefined ? undefined : JSON.stringify(args.body);
    const { retry } = this.options;
    const abort = context.signal;

    for (let attempt = 1; ; attempt++) {
      let key = "";
      try {
        if (abort?.aborted) throw abandoned(call);
        key = await this.readKey(name);
        if (this.bucket) {
          this.refuseLongWait(call.endpoint, call.priority);
          const queued = performance.now();
          call.routineBudgetWaitMs = await this.bucket.take(call.priority);
          call.rateLimitWaitMs = Math.round((performance.now() - queued) * 1000) / 1000;
        }
        return await this.attempt(call, def.method, url, body, key, schema, abort);
      } catch (err) {
        // A bounced call was not sent: the caller retries it later, not this loop.
        if (!(err instanceof ServiceError) || err instanceof ServiceThrottledError) throw err;
        scrub(err, key);
        const repeatable =
          err.retryable && (call.idempotent || !err.outcomeUnknown) && !abort?.aborted;
        if (!repeatable || attempt >= retry.maxAttempts) throw err;
        const delay = backoffDelayMs(retry, attempt, this.options.random, err.retryAfterMs ?? 0);
        this.log?.debug(
          { endpoint: name, attempt, delayMs: delay, error: err.message },
          "retrying service call",
        );
        await (this.options.sleep ?? realSleep)(delay);
      }
    }
  }

  /**
   * Throws `ServiceThrottledError` when a call of `endpoint` made now would wait longer
   * than `rateLimitMaxWaitMs` for the rate limit (see TransportOptions).
   */
  refuseLongWait(endpoint: string, priority: CallPriority): void {
    const maxWait = this.options.rateLimitMaxWaitMs;
    if (!this.bucket || maxWait === undefined) return;
    const wait = this.bucket.waitEstimateMs(priority);
    if (wait <= maxWait) return;
    throw new ServiceThrottledError(
      // No figure in the message: a repeat writes the same condition, i.e. nothing.
      `the client-side rate limit of this connection is saturated (more than ${maxWait} ms of calls ahead): ${endpoint} was not sent and is retried`,
      { endpoint, code: undefined },
      this.bucket.reserveLaterSlotMs(priority),
    );
  }

  /**
   * Sends `key` from the next attempt on, without asking `options.apiKey` (the owner tells
   * each key it reads: config/api-key.ts, controllers/connections/client.ts); undefined: asks.
   */
  useApiKey(key: string | undefined): void {
    this.apiKey = key;
  }

  /** Closes idle keep-alive sockets. */
  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  private async readKey(endpoint: string): Promise<string> {
    let key: string;
    try {
      key = this.apiKey ?? (await this.options.apiKey());
    } catch (err) {
      throw new ServiceAuthError(
        `the API key could not be read: ${err instanceof Error ? err.message : String(err)}`,
        { endpoint, code: undefined },
      );
    }
    if (!key) throw new ServiceAuthError("the API key is empty", { endpoint, code: undefined });
    return key;
  }

  private async attempt<T>(
    call: TransportCall,
    method: string,
    url: string,
    body: string | undefined,
    key: string,
    schema: z.ZodType<T>,
    abort: AbortSignal | undefined,
  ): Promise<T> {
    const started = performance.now();
    let raw: RawResponse;
    try {
      const res = await this.send({
        method,
        url,
        headers: {
          Authorization: `Bearer ${key}`,
          Accept: "application/json",
          ...(body === undefined ? {} : { "Content-Type": "application/json" }),
        },
        body,
        // An API client follows no redirect (exchange returns a 3xx unread): following
        // one re-sends the Authorization header (and, for 307/308, the body) to
        // wherever the answer points.
        agent: url.startsWith("https:") ? this.agents.https : this.agents.http,
        timeoutMs: this.options.timeoutMs,
        maxBytes: this.options.maxResponseBytes,
        signal: abort,
      });
      if (res.httpStatus >= 300 && res.httpStatus < 400) {
        throw redirectError(call, res.httpStatus, res.location);
      }
      raw = {
        httpStatus: res.httpStatus,
        bodyText: res.bodyText,
        retryAfterMs: parseRetryAfter(res.retryAfter),
      };
    } catch (err) {
      const error =
        err instanceof ServiceError
          ? err
          : abort?.aborted
            ? abandoned(call, err)
            : networkError(call, err, this.options);
      this.observe(call, method, error.code ?? "error", started, error.message);
      throw error;
    }
    const name = call.endpoint as EndpointName;
    try {
      const data = interpretResponse(call, raw, schema);
      this.options.availability?.record(name, "present");
      this.observe(call, method, 200, started);
      return data;
    } catch (err) {
      if (err instanceof ServiceError) {
        const verdict = verdictOfError(err);
        if (verdict) this.options.availability?.record(name, verdict);
        this.observe(call, method, err.code ?? "error", started, err.message);
      }
      throw err;
    }
  }

  private observe(
    call: TransportCall,
    method: string,
    code: number | "error",
    started: number,
    error?: string,
  ): void {
    const durationMs = Math.round((performance.now() - started) * 1000) / 1000;
    const { rateLimitWaitMs, routineBudgetWaitMs, priority } = call;
    this.options.onRequest?.({
      endpoint: call.endpoint,
      method,
      code,
      durationMs,
      rateLimitWaitMs,
      priority,
      ...(routineBudgetWaitMs > 0 ? { routineBudgetWaitMs } : {}),
    });
    const line = { endpoint: call.endpoint, request: call.where, code, durationMs };
    this.log?.debug(error ? { ...line, error } : line, "service call");
  }
}

/**
 * `template` of endpoint `name` with its `{param}` placeholders filled with URI-encoded
 * `params`. Nothing is sent when it throws: `ServiceInvalidRequestError` for a
 * placeholder without a value or with an empty one (no request goes to a collapsed path
 * such as `/v1/training/instance//detail`), `ServiceInvalidIdError` for a value that is
 * not a well-formed id (a segment `.` or `..` would reach another path: encoding leaves
 * dots as they are).
 */
export function renderPath(name: string, template: string, params: Record<string, string> = {}) {
  return template.replace(/\{(\w+)\}/g, (_, key: string) => {
    const value = params[key];
    if (value === undefined || value === "") {
      throw new ServiceInvalidRequestError(
        `invalid ${name} request: missing value for path parameter {${key}} of ${template}`,
        { endpoint: name },
      );
    }
    if (!isServiceId(value)) {
      throw new ServiceInvalidIdError(
        `invalid ${name} request: the ${key} ${quoteId(value)} is not a well-formed service id (${SERVICE_ID_RULE}); nothing was sent`,
        { endpoint: name },
      );
    }
    return encodeURIComponent(value);
  });
}

function queryString(query: CallArgs["query"]): string {
  if (!query) return "";
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
  const text = params.toString();
  return text ? `?${text}` : "";
}

/** Retry-After in seconds (the only form a JSON API is likely to send), as ms. */
function parseRetryAfter(value: string | null): number | undefined {
  if (value === null || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value.trim()) * 1000;
}
