/**
 * The runtime's defaults: what a Manager, KubeClient, informer or leader elector uses
 * when not told otherwise, and what the operator config (src/config/schema.ts)
 * defaults to. One figure for both, so that a test operator or `uninstall-check`,
 * built without the config, runs as the installed operator does. Imports nothing (the
 * modules that use the defaults import it, and the config loads it without the
 * runtime), so the shapes are spelt out: those of `TokenBucketOptions` and
 * `BackoffOptions` (fair-lanes.ts).
 */

/**
 * Client-side limit of Kubernetes requests of one flow (a connection's objects; Events
 * have a limiter of their own with the same figures). Above client-go's 20/30: a create
 * costs 4 writes plus 2 Events, and at 20/s the client limit, not the work, would set
 * the time to Ready; the API server still protects itself with priority and fairness.
 */
export const DEFAULT_KUBE_RATE_LIMIT: Readonly<{ qps: number; burst: number }> = {
  qps: 50,
  burst: 100,
};

/**
 * Flows (connections, fair-lanes.ts) that can go at full pace at once:
 * each flow has a Kubernetes budget ({@link DEFAULT_KUBE_RATE_LIMIT}) and a controller's
 * workers (`concurrency`) of its own, so that one account's backlog spends no other's;
 * the ceilings of all flows together leave room for this many, and more share them in
 * turn.
 */
export const FLOWS_AT_FULL_PACE = 4;

/** The ceiling of Kubernetes requests of all flows together (see {@link FLOWS_AT_FULL_PACE}). */
export const DEFAULT_KUBE_TOTAL_RATE_LIMIT: Readonly<{ qps: number; burst: number }> = {
  qps: DEFAULT_KUBE_RATE_LIMIT.qps * FLOWS_AT_FULL_PACE,
  burst: DEFAULT_KUBE_RATE_LIMIT.burst * FLOWS_AT_FULL_PACE,
};

/**
 * Workers per controller and flow (`flowWorkers` of controller-runtime.ts). A worker is
 * an async task, not a thread: idle ones cost nothing, and with few of them a couple of
 * objects whose service reads hang would hold them all (docs/performance.md, "The
 * service's HTTP client, and workers").
 */
export const DEFAULT_CONCURRENCY = 16;

/**
 * Kubernetes requests one client has in flight at once (watches aside): one flow's
 * workers each with a request, shared by the flows (kube.ts): when several
 * flows burst at once, a seat set free goes to the flow holding the fewest, so another
 * account's write goes next instead of queueing at the API server behind a backlog's.
 */
export const DEFAULT_KUBE_MAX_IN_FLIGHT = DEFAULT_CONCURRENCY;

/** The bound of one reconcile (config `reconcileTimeoutMs`); 0 would mean none. */
export const DEFAULT_RECONCILE_TIMEOUT_MS = 60_000;

/** Global limit of a workqueue's rate-limited retries (client-go's): 10 per second, burst 100. */
export const DEFAULT_RETRY_RATE_LIMIT: Readonly<{ qps: number; burst: number }> = {
  qps: 10,
  burst: 100,
};

/** Retry backoff of a failing key: about 100 ms up to 5 minutes. */
export const DEFAULT_BACKOFF: Readonly<{ baseMs: number; maxMs: number }> = {
  baseMs: 100,
  maxMs: 300_000,
};

/** Retry of keys held by an external terminal error: 15 s, doubling, at most 5 min. */
export const DEFAULT_HOLD_BACKOFF: Readonly<{ baseMs: number; maxMs: number }> = {
  baseMs: 15_000,
  maxMs: 300_000,
};

/** Every object is reconciled again after about this long (10 min); 0 disables. */
export const DEFAULT_RESYNC_PERIOD_MS = 600_000;

/** Fraction of the resync period added at random (0.1 = up to +10%). */
export const DEFAULT_RESYNC_JITTER = 0.1;

/** A watch silent for this long is abandoned and restarted. */
export const DEFAULT_WATCHDOG_MS = 300_000;

/**
 * Longest the informer cache may take to list every kind at start before the operator
 * exits so that its pod restarts (controller-runtime's CacheSyncTimeout); 0: no bound.
 */
export const DEFAULT_CACHE_SYNC_TIMEOUT_MS = 120_000;

/**
 * The whole graceful stop after SIGTERM (stop-budget.ts): inside Kubernetes' default
 * grace period of 30 s, with 5 s to spare (the chart sets it from its grace period).
 */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 25_000;

/** Lease timings of leader election (client-go's). */
export const DEFAULT_LEASE_TIMINGS: Readonly<{
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}> = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

/** Port of the /metrics, /healthz and /readyz server. */
export const DEFAULT_HEALTH_PORT = 8080;
