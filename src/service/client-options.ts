/**
 * The options of a `ServiceClient` (client.ts): where the service is, the key, and how
 * calls are timed, retried, limited and read.
 */
import type { Logger } from "pino";
import type { RetryPolicy } from "./backoff.js";
import type { EndpointOverrides } from "./endpoints.js";
import type { CreateTaskFieldNames } from "./kinds/trainingjob.js";
import type { RateLimit, Sleep } from "./rate-limiter.js";
import type { SubscriptionResultMapping } from "./schemas/create.js";
import type { ProxyResolver } from "./service-proxy.js";
import type {
  RequestObservation,
  ServiceCallMetrics,
  ServiceHttpClient,
} from "./transport-options.js";

/** How a `ServiceClient` reaches and treats the service. */
export interface ServiceClientOptions {
  /** Base URL the endpoint paths are appended to, e.g. `https://api.example.com`. */
  baseUrl: string;
  /**
   * Asked for the API key at each attempt, so a rotated Secret takes effect at once;
   * while `useApiKey` has told the client a key (the default connection's key reader and
   * the ServiceConnections' registry do), that key is sent instead.
   */
  apiKey: () => string | Promise<string>;
  /** Timeout per attempt, in ms. Default 10 000. */
  timeoutMs?: number;
  /**
   * Longest response body read, in bytes: a longer one is cut off, its stream destroyed,
   * and the call fails as a malformed answer. Default 4 MiB.
   */
  maxResponseBytes?: number;
  /**
   * A pooled keep-alive socket idle this long is closed, below the service's keep-alive
   * timeout. Default 4 000 (`DEFAULT_IDLE_SOCKET_TIMEOUT_MS`).
   */
  idleSocketTimeoutMs?: number;
  /** Sent as `User-Agent` with every call. Default `aidc-operator`. */
  userAgent?: string;
  /** What speaks HTTP to the service: `node-http` (default) or `node-fetch`. */
  httpClient?: ServiceHttpClient;
  /**
   * The proxy of the base URL (HTTPS_PROXY... as the composition reads them); default
   * none: direct. The constructor throws `ServiceProxyError` for one it cannot use.
   */
  proxyFor?: ProxyResolver;
  /** Retries of idempotent calls. Default 4 attempts, 200 ms doubling, at most 5 s. */
  retry?: RetryPolicy;
  /** Client-side token bucket; null turns it off. Default 50/s with a burst of 100. */
  rateLimit?: RateLimit | null;
  /**
   * A call that would wait longer than this for the rate limit fails at once with
   * `ServiceThrottledError` (not sent), freeing its reconcile's worker; undefined
   * (default): every call waits its turn. Service connections set it, so one account's
   * saturated limit cannot hold the workers every account shares.
   */
  rateLimitMaxWaitMs?: number;
  /**
   * Share (0..1] of `rateLimit` that routine calls (polls of settled objects, list walks)
   * may use; their intervals stretch to fit. Default: all of it.
   */
  routineShare?: number;
  /** Endpoint overrides by name: `"/path"` or `"METHOD /path"` enables, null disables. */
  endpoints?: EndpointOverrides;
  /** Debug log per attempt (endpoint, path, status, duration); never headers or the key. */
  logger?: Logger;
  /** Where every attempt is recorded (the aidc_service_* metrics of its connection). */
  metrics?: ServiceCallMetrics;
  /** Called after every attempt (tests watching the calls). */
  onRequest?: (e: RequestObservation) => void;
  /**
   * Asked right before each attempt is sent; false stops the call unsent (a leader whose
   * Lease may have passed to another replica). Default: always true.
   */
  mayCall?: () => boolean;
  /** Jitter source (tests). */
  random?: () => number;
  /** How waits happen (tests). */
  sleep?: Sleep;
  /**
   * How long a product catalog answer (training and NAS product lists, and NAS
   * availability per compute center and product) is reused, in ms; concurrent asks
   * share one request. Default 30 000; 0 reads it every time.
   */
  catalogTtlMs?: number;
  /** Clock of the catalog cache (tests). Default Date.now. */
  now?: () => number;
  /** How long a "missing" operation verdict stands before it is probed again. Default 10 000. */
  recheckMissingMs?: number;
  /** How subscription results read where they differ from the built-in shapes. */
  subscriptionResult?: SubscriptionResultMapping;
  /** Wire names of the task create's assumed fields (`sourceTaskId`, `templateId`). */
  createTaskFields?: Partial<CreateTaskFieldNames>;
}
