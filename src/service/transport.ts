/**
 * One service call, from an operation's name to its parsed data: the URL (ids checked,
 * then encoded), the rate limit, one exchange per attempt (http-exchange.ts), the answer
 * read (the envelope decides, the schema parses the data), retries when a repeat cannot
 * duplicate an effect, metrics, and debug logs without header or key. No redirect is
 * followed and the body is bounded, so a hostile service can neither take the key
 * elsewhere nor cost unbounded memory.
 */
import type { Logger } from "pino";
import { z } from "zod";
import { backoffDelayMs } from "./backoff.js";
import { type CallContext, UNSCOPED_CALLS } from "./call-context.js";
import type { EndpointName } from "./endpoints.js";
import {
  EndpointDisabledError,
  ServiceAuthError,
  ServiceError,
  ServiceThrottledError,
} from "./errors.js";
import {
  type ExchangeAnswer,
  exchange,
  type IdleBoundedAgents,
  idleBoundedAgents,
} from "./http-exchange.js";
import { verdictOfError } from "./operation-availability.js";
import { type CallPriority, priorityOf, realSleep, TokenBucket } from "./rate-limiter.js";
import { describeIssues, optionalString, queryString, renderPath } from "./schemas/primitives.js";
import { proxyOptionsFor } from "./service-proxy.js";
import {
  abandoned,
  type CallDescription,
  errorForStatus,
  exchangeError,
  malformed,
  notServiceAnswer,
  scrub,
} from "./transport-errors.js";
import { type CallArgs, REDACTED_LOG_PATHS, type TransportOptions } from "./transport-options.js";

type TransportCall = CallDescription & {
  url: string;
  body: string | undefined;
  signal: AbortSignal | undefined;
  priority: CallPriority;
  rateLimitWaitMs: number;
  routineBudgetWaitMs: number;
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
    this.agents = idleBoundedAgents(
      options.idleSocketTimeoutMs,
      64,
      proxyOptionsFor("the service", this.baseUrl, options.proxyFor),
    );
    this.send = options.httpClient === "node-fetch" ? fetchExchange : exchange;
    const sleep = options.sleep ?? realSleep;
    this.bucket = options.rateLimit
      ? new TokenBucket(options.rateLimit, Date.now, sleep, options.routineShare)
      : null;
    // The caller's component when it names one (pino would write the key twice).
    const parent = options.logger;
    this.log = parent?.child(
      parent.bindings().component === undefined ? { component: "service-client" } : {},
      { redact: { paths: REDACTED_LOG_PATHS, censor: "[REDACTED]" } },
    );
  }

  /**
   * Calls endpoint `name` and returns its data parsed by `schema`; throws a `ServiceError`
   * subclass for every failure. A retryable failure is retried only when a repeat cannot
   * duplicate an effect: the endpoint is idempotent, or the request was not acted on.
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
    const body = args.body === undefined ? undefined : JSON.stringify(args.body);
    const call: TransportCall = {
      endpoint: name,
      where: `${def.method} ${path}`,
      idempotent: def.idempotent,
      method: def.method,
      url: this.baseUrl + path + queryString(args.query),
      body,
      ...(body === undefined ? {} : { bodyBytes: Buffer.byteLength(body) }),
      signal: context.signal,
      priority: priorityOf(context),
      rateLimitWaitMs: 0,
      routineBudgetWaitMs: 0,
    };
    const { retry, mayCall } = this.options;
    // Checked again after the waits, right before the send (mayCall: see client-options.ts).
    const stopped = () => call.signal?.aborted === true || mayCall?.() === false;
    for (let attempt = 1; ; attempt++) {
      try {
        if (stopped()) throw abandoned(call);
        const key = await this.readKey(name);
        if (this.bucket) {
          this.refuseLongWait(call.endpoint, call.priority);
          const queued = performance.now();
          call.routineBudgetWaitMs = await this.bucket.take(call.priority);
          call.rateLimitWaitMs = Math.round((performance.now() - queued) * 1000) / 1000;
        }
        if (stopped()) throw abandoned(call);
        return await this.attempt(call, key, schema);
      } catch (err) {
        // A bounced call was not sent: the caller retries it later, not this loop.
        if (!(err instanceof ServiceError) || err instanceof ServiceThrottledError) throw err;
        const repeatable = err.retryable && (call.idempotent || !err.outcomeUnknown) && !stopped();
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

  /** Throws `ServiceThrottledError` when a call now would wait past `rateLimitMaxWaitMs`. */
  refuseLongWait(endpoint: string, priority: CallPriority): void {
    this.bucket?.refuseLongWait(endpoint, priority, this.options.rateLimitMaxWaitMs);
  }

  /** Sends `key` from the next attempt on without asking `options.apiKey`; undefined: asks. */
  useApiKey(key: string | undefined): void {
    this.apiKey = key;
  }

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

  private async attempt<T>(call: TransportCall, key: string, schema: z.ZodType<T>): Promise<T> {
    const started = performance.now();
    let answer: ExchangeAnswer;
    try {
      answer = await this.send({
        method: call.method,
        url: call.url,
        headers: {
          Authorization: `Bearer ${key}`,
          Accept: "application/json",
          "User-Agent": this.options.userAgent,
          ...(call.body === undefined ? {} : { "Content-Type": "application/json" }),
        },
        body: call.body,
        // An API client follows no redirect (exchange returns a 3xx unread): following
        // one re-sends the Authorization header (and, for 307/308, the body) elsewhere.
        agent: call.url.startsWith("https:") ? this.agents.https : this.agents.http,
        timeoutMs: this.options.timeoutMs,
        maxBytes: this.options.maxResponseBytes,
        signal: call.signal,
        ...(this.options.mayCall ? { mayCall: this.options.mayCall } : {}),
      });
      if (answer.httpStatus >= 300) {
        const notService = notServiceAnswer(call, answer, this.agents.proxy);
        if (notService) throw notService;
      }
    } catch (err) {
      const error = exchangeError(call, err, { ...this.options, proxy: this.agents.proxy });
      scrub(error, key);
      this.observe(call, error.code ?? "error", started, error.message);
      throw error;
    }
    const name = call.endpoint as EndpointName;
    try {
      const data = interpretResponse(call, answer, schema);
      this.options.availability?.record(name, "present");
      this.observe(call, 200, started);
      return data;
    } catch (err) {
      if (err instanceof ServiceError) {
        scrub(err, key);
        const verdict = verdictOfError(err);
        if (verdict) this.options.availability?.record(name, verdict);
        this.observe(call, err.code ?? "error", started, err.message);
      }
      throw err;
    }
  }

  private observe(call: TransportCall, code: number | "error", started: number, error?: string) {
    const durationMs = Math.round((performance.now() - started) * 1000) / 1000;
    const { rateLimitWaitMs, routineBudgetWaitMs, priority, endpoint } = call;
    const m = this.options.metrics;
    if (m) {
      const { connection } = m;
      m.requests.inc({ endpoint, code: String(code), connection });
      m.duration.observe({ endpoint, connection }, durationMs / 1000);
      m.rateLimitWait.observe({ priority, connection }, rateLimitWaitMs / 1000);
      if (routineBudgetWaitMs) m.routineBudgetWait.inc({ connection }, routineBudgetWaitMs / 1000);
    }
    this.options.onRequest?.({
      endpoint: call.endpoint,
      method: call.method,
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

/** The envelope of every answer; `status` may be a numeric string. */
const envelopeSchema = z.object({
  status: z.preprocess((v) => (typeof v === "string" && /^\d+$/.test(v) ? Number(v) : v), z.int()),
  message: optionalString,
  data: z.unknown(),
});

export interface RawResponse {
  httpStatus: number;
  bodyText: string;
  retryAfterMs?: number | undefined;
}

/**
 * The operation's data parsed by `dataSchema`, or the typed error: the envelope's status
 * decides (200 is the only success), the HTTP status when there is no envelope (a 2xx
 * without one is malformed).
 */
export function interpretResponse<T>(
  call: CallDescription,
  raw: RawResponse,
  dataSchema: z.ZodType<T>,
): T {
  const httpOk = raw.httpStatus >= 200 && raw.httpStatus < 300;
  let json: unknown;
  let parsedJson = true;
  try {
    json = JSON.parse(raw.bodyText);
  } catch {
    parsedJson = false;
  }
  const envelope = parsedJson ? envelopeSchema.safeParse(json) : undefined;
  if (!envelope?.success) {
    if (!httpOk) throw errorForStatus(call, raw.httpStatus, undefined, false, raw.retryAfterMs);
    throw malformed(
      call,
      parsedJson
        ? "the body is not a service envelope (no integer status)"
        : "the body is not JSON",
      raw.httpStatus,
    );
  }
  const { status, message, data } = envelope.data;
  if (status !== 200) throw errorForStatus(call, status, message, true, raw.retryAfterMs);
  if (!httpOk) throw errorForStatus(call, raw.httpStatus, message, false, raw.retryAfterMs);
  const parsed = dataSchema.safeParse(data);
  if (!parsed.success) throw malformed(call, describeIssues(parsed.error), status, true);
  return parsed.data;
}
