/**
 * One request of a {@link KubeClient} from its body to its answer: the body serialized
 * once and redacted, the client's rate limit and one of its seats taken per reconcile
 * flow (fair-lanes.ts), the reconcile's deadline checked, the answer retried as
 * client-go does, and each try reported.
 */

import {
  DEFAULT_KUBE_MAX_IN_FLIGHT,
  DEFAULT_KUBE_RATE_LIMIT,
  DEFAULT_KUBE_TOTAL_RATE_LIMIT,
} from "./defaults.js";
import { RetryableError } from "./errors.js";
import { FairSeats } from "./fair-lanes.js";
import { isConnectionReset, KubeApiError } from "./kube-errors.js";
import type { KubeHttpAnswer, KubeTransport } from "./kube-transport.js";
import { FairTokenBucket, type FlowRateLimitOptions } from "./ratelimit.js";
import type { SecretRedactor } from "./redaction.js";

/** One Kubernetes request as observed by {@link KubeRequestOptions.onRequest}. */
export interface KubeRequestInfo {
  method: string;
  /** URL path without the query. */
  path: string;
  /** HTTP status, or 0 when no answer came. */
  code: number;
  durationMs: number;
  /** Time the request waited for the client's rate limit and a seat before it was sent. */
  rateLimitWaitMs: number;
}

/** How a client's requests are sent (part of the KubeClient's options). */
export interface KubeRequestOptions {
  /**
   * Client-side rate limit of requests, per flow, and their ceiling. Default
   * {@link DEFAULT_KUBE_RATE_LIMIT} under {@link DEFAULT_KUBE_TOTAL_RATE_LIMIT}.
   */
  rateLimit?: FlowRateLimitOptions;
  /**
   * Requests in flight at once, shared by the flows in turn (default
   * {@link DEFAULT_KUBE_MAX_IN_FLIGHT}); watches are not counted.
   */
  maxInFlight?: number;
  /** Called after every request (metrics, tests counting writes). */
  onRequest?: (info: KubeRequestInfo) => void;
  /**
   * Replaces registered secrets in every body sent (status, Events, annotations), so
   * that no write puts the API key into the cluster, whatever quoted it.
   */
  redactor?: SecretRedactor;
}

/**
 * The reconcile a request is made for (a client's view, `KubeClient.forReconcile`):
 * its flow takes that flow's share of the rate limit; once its signal is aborted (the
 * reconcile was abandoned at its deadline, reconcile-attempt.ts) nothing more is sent,
 * so it cannot write state computed before the deadline over what a newer reconcile saw.
 */
export interface ReconcileView {
  readonly flow: string;
  readonly signal: AbortSignal;
}

/** A request made for a reconcile that was already abandoned; nothing was sent. */
export class ReconcileAbandonedError extends RetryableError {
  constructor(what: string) {
    super("ReconcileAbandoned", `${what} was not sent: its reconcile was abandoned`);
    this.name = "ReconcileAbandonedError";
  }
}

/** HTTP methods of the Kubernetes API. */
export type KubeMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** Tries after the first one of a request the server asked to retry (429, Retry-After). */
export const MAX_RETRIES = 4;
/** The longest wait for one Retry-After. */
export const MAX_RETRY_WAIT_MS = 10_000;

/** Sends a client's requests over its transport. See the module comment. */
export class KubeRequests {
  private readonly bucket: FairTokenBucket;
  private readonly seats: FairSeats;
  private readonly onRequest: ((info: KubeRequestInfo) => void) | undefined;
  private readonly redactor: SecretRedactor | undefined;

  constructor(
    private readonly http: KubeTransport,
    options: KubeRequestOptions = {},
  ) {
    this.bucket = new FairTokenBucket(
      options.rateLimit ?? { ...DEFAULT_KUBE_RATE_LIMIT, total: DEFAULT_KUBE_TOTAL_RATE_LIMIT },
    );
    this.seats = new FairSeats(options.maxInFlight ?? DEFAULT_KUBE_MAX_IN_FLIGHT);
    this.onRequest = options.onRequest;
    this.redactor = options.redactor;
  }

  /**
   * Sends one request and answers its parsed body. Rate-limited and observed on each
   * try. A 429, and a GET's 5xx with Retry-After, waits as the server asks (at most
   * {@link MAX_RETRY_WAIT_MS}) and tries again, up to {@link MAX_RETRIES} times; a 401
   * makes the credentials be read anew and the request tried once more, and a GET
   * whose connection was closed under it is sent once more. Else a {@link KubeApiError}.
   * Made for `reconcile` (undefined: outside any), it takes its flow's budget and is
   * refused with {@link ReconcileAbandonedError} once that reconcile is abandoned.
   */
  async request(
    method: KubeMethod,
    path: string,
    query: Record<string, string> = {},
    body?: unknown,
    contentType?: string,
    reconcile?: ReconcileView,
  ): Promise<unknown> {
    // Serialized once, redacted on the way (status, Events, annotations).
    const sent =
      body === undefined
        ? undefined
        : this.redactor
          ? this.redactor.serialize(body)
          : JSON.stringify(body);
    const target = withQuery(path, query);
    let refreshed = false;
    let resent = false;
    for (let retries = 0; ; retries++) {
      let answer: KubeHttpAnswer;
      try {
        answer = await this.send(method, path, target, sent, contentType, reconcile);
      } catch (err) {
        // A kept-alive connection the server had just closed: a GET goes once more.
        if (method !== "GET" || resent || !isConnectionReset(err)) throw err;
        resent = true;
        continue;
      }
      const code = answer.status;
      if (code >= 200 && code <= 299) return parseBody(answer.text);
      if (code === 401 && !refreshed && this.http.refreshCredentials()) {
        refreshed = true;
        continue;
      }
      const waitMs = retryWaitMs(method, answer);
      if (waitMs !== undefined && retries < MAX_RETRIES) {
        await new Promise((r) => setTimeout(r, waitMs));
        continue;
      }
      throw new KubeApiError(method, path, code, parseBody(answer.text));
    }
  }

  /** One try of {@link request}: the rate limit, the reconcile deadline, the metrics. */
  private async send(
    method: KubeMethod,
    path: string,
    target: string,
    body: string | undefined,
    contentType: string | undefined,
    reconcile: ReconcileView | undefined,
  ): Promise<KubeHttpAnswer> {
    // A reconcile abandoned at its deadline writes nothing more.
    if (reconcile?.signal.aborted) throw new ReconcileAbandonedError(`${method} ${path}`);
    // Each flow (an account) has a bucket of its own; the ceiling goes in turn.
    const flow = reconcile?.flow ?? "";
    let waitMs = await this.bucket.take(flow);
    // One of the client's seats: a burst of one flow is not all at the server at once.
    const seated = this.seats.acquire(flow);
    if (seated) {
      const seatWait = Date.now();
      await seated;
      waitMs += Date.now() - seatWait;
    }
    if (reconcile?.signal.aborted) {
      this.seats.release(flow);
      throw new ReconcileAbandonedError(`${method} ${path}`);
    }
    const started = Date.now();
    let code = 0;
    try {
      const answer = await this.http.request(method, target, body, contentType);
      code = answer.status;
      return answer;
    } finally {
      this.seats.release(flow);
      this.onRequest?.({
        method,
        path,
        code,
        durationMs: Date.now() - started,
        rateLimitWaitMs: waitMs,
      });
    }
  }
}

/**
 * How long to wait before trying `answer`'s request again, or undefined when it is
 * not to be tried again: a 429 (Retry-After, else 1 s), a GET's 5xx with Retry-After
 * (client-go's `checkWait`), at most {@link MAX_RETRY_WAIT_MS}.
 */
export function retryWaitMs(method: string, answer: KubeHttpAnswer): number | undefined {
  const { status } = answer;
  const seconds = answer.retryAfter !== undefined ? Number(answer.retryAfter.trim()) : Number.NaN;
  const given = Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
  if (status === 429) return Math.min(given ?? 1000, MAX_RETRY_WAIT_MS);
  if (status >= 500 && method === "GET" && given !== undefined) {
    return Math.min(given, MAX_RETRY_WAIT_MS);
  }
  return undefined;
}

function parseBody(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return text; // not JSON: kept for the error message
  }
}

/** `path` with `query` appended. */
export function withQuery(path: string, query: Record<string, string>): string {
  const q = new URLSearchParams(query).toString();
  return q ? `${path}?${q}` : path;
}
