/**
 * The service client's defaults, and what the operator assumes of the service, which
 * the operator config (src/config/schema.ts) defaults to as well: one figure for both,
 * so that a client built without the config (tests, `uninstall-check`) behaves as the
 * installed operator's does. Imports no code (only types).
 */
import type { RetryPolicy } from "./backoff.js";
import type { RateLimit } from "./rate-limiter.js";

/** The region S3 requests (and an STS exchange) are signed for when a connection names none. */
export const DEFAULT_S3_REGION = "us-east-1";

/** Retries of idempotent calls: 4 attempts, 200 ms doubling, at most 5 s between attempts. */
export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = {
  maxAttempts: 4,
  baseDelayMs: 200,
  maxDelayMs: 5_000,
};

/** Reuse of a product catalog answer. */
export const DEFAULT_CATALOG_TTL_MS = 30_000;

/** Client-side rate limit: the spec names none, this stays well clear of abuse. */
export const DEFAULT_RATE_LIMIT: Readonly<RateLimit> = { ratePerSecond: 50, burst: 100 };

/**
 * Longest response body: the largest answer of the service is a page of a list (50
 * records of a few KiB), so 4 MiB leaves a wide margin and bounds what one hostile
 * answer can cost.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

/**
 * How long a pooled keep-alive socket may stay idle before the client closes it
 * (`service.idleSocketTimeoutMs`): below the 5 s of a Node server and above nothing
 * common, so no request is written on a socket the server is closing (ECONNRESET, which
 * leaves a create's outcome unknown). Lower it below the service's own keep-alive
 * timeout where that is shorter (a proxy in front of it).
 */
export const DEFAULT_IDLE_SOCKET_TIMEOUT_MS = 4_000;

/** Timeout per attempt. */
export const DEFAULT_TIMEOUT_MS = 10_000;

/** Time after which a "missing" operation verdict (a bare 404) is probed again. */
export const DEFAULT_RECHECK_MISSING_MS = 10_000;

/**
 * List visibility window: how long after a create the service may take to list the new
 * resource (`service.listVisibilityWindowMs`). Well beyond any order time seen (a task
 * listed only when its order completed, 25 s later): a create whose outcome is unknown
 * is looked up this long, and absence from the list counts only after it.
 */
export const DEFAULT_LIST_VISIBILITY_WINDOW_MS = 600_000;

/**
 * How long a NAS capacity change the service accepted may take to show in its quota
 * before it counts as lost (`service.nasScaleSettleMs`).
 */
export const DEFAULT_NAS_SCALE_SETTLE_MS = 60_000;
