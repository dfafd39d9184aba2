/**
 * What a running controller gets from the manager: the shared services (client,
 * cache, clock, log, events, metrics) and the settings of its queue and workers
 * (how many, per flow and per lane).
 */
import type { Logger } from "pino";
import type { InformerCache } from "./cache.js";
import { FLOWS_AT_FULL_PACE } from "./defaults.js";
import type { EventRecorder } from "./events.js";
import type { BackoffOptions, TokenBucketOptions } from "./fair-lanes.js";
import type { KubeClient } from "./kube.js";
import type { RuntimeMetrics } from "./metrics.js";
import type { Clock, KubeObject } from "./resource.js";
import type { LaneLimits } from "./workqueue.js";

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
   * (see controller-keys.ts). 0 or absent: no bound.
   */
  reconcileTimeoutMs?: number;
}

/**
 * The workers of a controller whose keys are in flows, for `concurrency` (config
 * `concurrency`): each flow holds at most `concurrency` of them, as it would alone, and
 * the pool has room for {@link FLOWS_AT_FULL_PACE} flows at once, so that a backlog of
 * one connection leaves another's objects as many workers as they have alone.
 */
export function flowWorkers(concurrency: number): { pool: number; perFlow: number } {
  return { pool: concurrency * FLOWS_AT_FULL_PACE, perFlow: concurrency };
}

/**
 * Of a flow's `workers`, how many the lanes behind work may hold (fair-lanes.ts):
 * follow-ups and routine looks together all but a quarter, routine looks all but a
 * quarter of that (at least one kept free at each step when there are two or more), so
 * that looks waiting on a saturated budget never keep a new object of the flow from a
 * worker, nor polls waiting for the routine budget a follow-up of the flow.
 */
export function laneWorkers(workers: number): Required<LaneLimits> {
  const deferred = allButAQuarter(workers);
  return { deferred, low: allButAQuarter(deferred) };
}

function allButAQuarter(n: number): number {
  return Math.max(1, n - Math.max(1, Math.floor(n / 4)));
}
