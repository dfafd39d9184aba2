/** What a Manager (manager.ts) is configured with, and the settings each controller gets from it. */
import type { Logger } from "pino";
import type { ControllerRuntime } from "./controller-runtime.js";
import {
  DEFAULT_CACHE_SYNC_TIMEOUT_MS,
  DEFAULT_CONCURRENCY,
  DEFAULT_RECONCILE_TIMEOUT_MS,
  DEFAULT_RESYNC_JITTER,
  DEFAULT_RESYNC_PERIOD_MS,
  DEFAULT_SHUTDOWN_TIMEOUT_MS,
} from "./defaults.js";
import type { BackoffOptions, TokenBucketOptions } from "./fair-lanes.js";
import type { KubeConfigLike } from "./kube-credentials.js";
import type { LeaseFence } from "./leader-election.js";
import type { RuntimeMetrics } from "./metrics.js";
import type { FlowRateLimitOptions, SecretRedactor } from "./outbound-guards.js";
import type { Clock, KubeObject, ResourceDescriptor } from "./resource.js";

/** Leader election settings of a Manager. */
export interface ManagerLeaderElection {
  leaseName: string;
  leaseNamespace: string;
  /** Default: host name plus a random suffix. */
  identity?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
}

/** Everything a Manager is configured with. */
export interface ManagerOptions {
  /** client-node's KubeConfig, or the lean loader's (kube-config.ts). */
  kubeConfig: KubeConfigLike;
  log: Logger;
  clock?: Clock;
  metrics?: RuntimeMetrics;
  /** Namespaces to watch; empty or absent = all. */
  namespaces?: string[];
  /**
   * Client-side limit of Kubernetes requests, per flow and in all (outbound-guards.ts); Events
   * have a limiter of their own with the same settings.
   */
  kubeRateLimit?: FlowRateLimitOptions;
  /** Requests each Kubernetes client has in flight at once, shared by the flows in turn. */
  kubeMaxInFlight?: number;
  /**
   * Replaces registered secrets (the API keys) in every body the operator sends to the
   * API server: status, Events, annotations. Pass the one the logger uses.
   */
  redactor?: SecretRedactor;
  informer?: { watchdogMs?: number; initialBackoffMs?: number; maxBackoffMs?: number };
  /**
   * A label selector added to the lists and watches of a kind (undefined: none), e.g.
   * a shard's `aidc.io/shard=a` on the kinds it reconciles; the wiring decides which.
   */
  watchSelector?: (res: ResourceDescriptor) => string | undefined;
  /**
   * The flow of an object of a controller's primary kind as the cache has it, undefined
   * when the cache has none (e.g. the account it uses): flows share the workers and the
   * Kubernetes write budget in turn. Absent: one.
   */
  flowOf?: (obj: KubeObject | undefined) => string;
  /** Workers per controller unless the controller says otherwise. Default {@link DEFAULT_CONCURRENCY}. */
  concurrency?: number;
  /**
   * Longest one reconcile may hold a worker before it is abandoned and its key retried
   * (controller-keys.ts). Default {@link DEFAULT_RECONCILE_TIMEOUT_MS}; 0: no bound.
   */
  reconcileTimeoutMs?: number;
  backoff?: Partial<BackoffOptions>;
  /** Retry of keys held by an external terminal error (see `isExternalHold`). */
  holdBackoff?: Partial<BackoffOptions>;
  retryRateLimit?: TokenBucketOptions;
  /** Default {@link DEFAULT_RESYNC_PERIOD_MS}; 0 disables. */
  resyncPeriodMs?: number;
  /** Default {@link DEFAULT_RESYNC_JITTER}. */
  resyncJitter?: number;
  /**
   * Longest the informer cache may take to list every kind at start (cache-sync.ts):
   * past it the manager fails (`done` rejects). Default {@link DEFAULT_CACHE_SYNC_TIMEOUT_MS}; 0: no bound.
   */
  cacheSyncTimeoutMs?: number;
  /** The whole graceful stop (stop-budget.ts). Default {@link DEFAULT_SHUTDOWN_TIMEOUT_MS}. */
  shutdownTimeoutMs?: number;
  /** Absent or undefined: no election, this process runs the controllers. */
  leaderElection?: ManagerLeaderElection;
  /** Where the elector records how long this process may act (made before the clients that ask it). */
  fence?: LeaseFence;
  /**
   * Called once this process runs the controllers (at start without leader election,
   * else once elected): what else only the leader does, e.g. calls to the service.
   */
  onLeading?: () => void;
  /** Metrics and health server; `false` for none (tests). */
  server?: { port: number; host?: string } | false;
  /** `reportingController` of Events. Default `aidc.io/aidc-operator`. */
  eventsController?: string;
}

/**
 * The runtime a controller of the manager runs with: the manager's shared parts and
 * its settings, defaults filled in.
 */
export function controllerRuntimeOf(
  options: ManagerOptions,
  shared: Pick<ControllerRuntime, "kube" | "cache" | "clock" | "events" | "metrics">,
): ControllerRuntime {
  return {
    ...shared,
    log: options.log,
    concurrency: options.concurrency ?? DEFAULT_CONCURRENCY,
    reconcileTimeoutMs: options.reconcileTimeoutMs ?? DEFAULT_RECONCILE_TIMEOUT_MS,
    ...(options.flowOf ? { flowOf: options.flowOf } : {}),
    ...(options.backoff ? { backoff: options.backoff } : {}),
    ...(options.holdBackoff ? { holdBackoff: options.holdBackoff } : {}),
    ...(options.retryRateLimit ? { retryRateLimit: options.retryRateLimit } : {}),
    resyncPeriodMs: options.resyncPeriodMs ?? DEFAULT_RESYNC_PERIOD_MS,
    resyncJitter: options.resyncJitter ?? DEFAULT_RESYNC_JITTER,
  };
}
