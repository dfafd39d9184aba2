/**
 * What the transport (transport.ts) is built with and reports: its options, the
 * observation of each attempt for metrics, the arguments of one call, the HTTP clients
 * it can speak through, and the log paths that never carry a key.
 */
import type { Logger } from "pino";
import type { Counter, Histogram } from "prom-client";
import type { RetryPolicy } from "./backoff.js";
import type { EndpointTable } from "./endpoints.js";
import type { OperationAvailability } from "./operation-availability.js";
import type { OperationArgs } from "./operation-caller.js";
import type { CallPriority, RateLimit, Sleep } from "./rate-limiter.js";
import type { ProxyResolver } from "./service-proxy.js";

/** One finished attempt, for metrics: the envelope (or HTTP) status, or "error" without an answer. */
export interface RequestObservation {
  endpoint: string;
  method: string;
  code: number | "error";
  durationMs: number;
  /** How long this attempt waited for the client-side rate limit (0 when it did not). */
  rateLimitWaitMs: number;
  /** The call's priority at the rate limit (`low`: a routine poll). */
  priority: CallPriority;
  /**
   * Of `rateLimitWaitMs`, what a routine call waited for the routine budget alone
   * (`routineShare`): routine observation ran that much slower than configured.
   */
  routineBudgetWaitMs?: number;
}

/**
 * The aidc_service_* metrics of the operator's registry (`RuntimeMetrics.serviceCallMetrics`,
 * src/runtime/metrics.ts) the transport records each attempt in, with the label of its
 * connection (account).
 */
export interface ServiceCallMetrics {
  /** A ServiceConnection's name, or `_default` for the operator's own connection. */
  connection: string;
  requests: Counter<"endpoint" | "code" | "connection">;
  duration: Histogram<"endpoint" | "connection">;
  rateLimitWait: Histogram<"priority" | "connection">;
  routineBudgetWait: Counter<"connection">;
}

/** Everything the transport needs; `ServiceAccount` (account.ts) fills the defaults. */
export interface TransportOptions {
  baseUrl: string;
  /** Asked for the key at each attempt while `ServiceTransport.useApiKey` has told none. */
  apiKey: () => string | Promise<string>;
  timeoutMs: number;
  /** Longest response body read, in bytes; a longer one is cut off (malformed answer). */
  maxResponseBytes: number;
  /**
   * A pooled keep-alive socket idle this long is closed and never reused, so that no
   * request races the server closing it (see http-exchange.ts).
   */
  idleSocketTimeoutMs: number;
  /** Sent as `User-Agent` with every call. */
  userAgent: string;
  /** What speaks HTTP: Node's `http` module (default) or node-fetch; see {@link ServiceHttpClient}. */
  httpClient?: ServiceHttpClient;
  /** The proxy of `baseUrl`; default none (direct). */
  proxyFor?: ProxyResolver;
  retry: RetryPolicy;
  rateLimit: RateLimit | null;
  /** Share of `rateLimit` routine (low-priority) calls may use; default all of it. */
  routineShare?: number | undefined;
  /**
   * A call that would wait longer than this for the rate limit is not sent: it fails at
   * once with `ServiceThrottledError` (retryable, not sent), so the caller's worker is
   * freed. Undefined: every call waits its turn.
   */
  rateLimitMaxWaitMs?: number | undefined;
  endpoints: EndpointTable;
  logger?: Logger | undefined;
  metrics?: ServiceCallMetrics | undefined;
  onRequest?: ((e: RequestObservation) => void) | undefined;
  /** Asked right before each attempt is sent; false stops the call unsent (client-options.ts). */
  mayCall?: (() => boolean) | undefined;
  /** Learns from every answer whether its operation exists (see operation-availability.ts). */
  availability?: OperationAvailability | undefined;
  /** Source of jitter; tests pass a constant. */
  random?: () => number;
  /** How backoffs and the rate limit wait; tests may shorten it. */
  sleep?: Sleep;
}

/** Path parameters, query and body of one call. */
export type CallArgs = OperationArgs;

/** Log paths pino blanks, should a caller ever put a header or key in a log object. */
export const REDACTED_LOG_PATHS = [
  "authorization",
  "Authorization",
  "apiKey",
  "headers.authorization",
  "headers.Authorization",
  "*.authorization",
  "*.Authorization",
  "*.apiKey",
];

/**
 * The HTTP client of the service calls: `node-http` (http-exchange.ts, the default) or
 * `node-fetch` (fetch-exchange.ts). Both keep the same contract (no redirect followed,
 * the body limit, the timeout, the caller's abort, Node's error codes) over the same
 * idle-bounded keep-alive agents; node-fetch costs about three times the CPU per
 * request (docs/performance.md, "The service's HTTP client, and workers").
 */
export type ServiceHttpClient = "node-http" | "node-fetch";
