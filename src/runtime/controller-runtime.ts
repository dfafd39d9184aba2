/**
 * What a running controller gets from the manager: the shared services (client,
 * cache, clock, log, events, metrics) and the settings of its queue and workers.
 */
import type { Logger } from "pino";
import type { InformerCache } from "./cache.js";
import type { EventRecorder } from "./events.js";
import type { KubeClient } from "./kube.js";
import type { RuntimeMetrics } from "./metrics.js";
import type { BackoffOptions, TokenBucketOptions } from "./ratelimit.js";
import type { Clock, KubeObject } from "./resource.js";

/** Shared services and settings a running controller needs (the manager provides them). */
export interface ControllerRuntime {
  kube: KubeClient;
  cache: InformerCache;
  clock: Clock;
  log: Logger;
  events: EventRecorder;
  metrics: RuntimeMetrics;
  /**
   * The flow of a primary object as the cache has it, undefined when it has none (e.g.
   * the account it uses): each flow gets its turn of every controller's workers and of
   * the Kubernetes write budget (workqueue.ts, kube.ts). Absent: one flow.
   */
  flowOf?: (obj: KubeObject | undefined) => string;
  /** Workers when the definition does not say. */
  concurrency: number;
  backoff?: Partial<BackoffOptions>;
  /**
   * Retry of a key held by an external terminal error (see `isExternalHold`): slow
   * and bounded, per key. Default `DEFAULT_HOLD_BACKOFF` (defaults.ts).
   */
  holdBackoff?: Partial<BackoffOptions>;
  retryRateLimit?: TokenBucketOptions;
  /** Every key is reconciled again after about this long (0: never). */
  resyncPeriodMs: number;
  /** Fraction of the resync period added at random (0.1 = up to +10%). */
  resyncJitter: number;
  /**
   * Longest a reconcile may hold a worker before it is abandoned and its key retried
   * (see reconcile-attempt.ts). 0 or absent: no bound.
   */
  reconcileTimeoutMs?: number;
}
