/**
 * The operator config's settings of the process's start and stop (schema.ts): how long
 * the cache may take to sync at start, and the graceful stop's budget. Their defaults
 * are the runtime's own (src/runtime/defaults.ts).
 */
import { z } from "zod";
import { DEFAULT_CACHE_SYNC_TIMEOUT_MS, DEFAULT_SHUTDOWN_TIMEOUT_MS } from "../runtime/defaults.js";

/** The top-level fields of the lifecycle settings, spread into the config's schema. */
export const lifecycleSettings = {
  cacheSyncTimeoutMs: z
    .number()
    .int()
    .min(0)
    .default(DEFAULT_CACHE_SYNC_TIMEOUT_MS)
    .describe(
      "Longest the operator waits at start for its cache to list every kind (an API server it cannot reach, a kind it may not list): meanwhile /readyz and one log line per backoff step say why; past it, it exits 1 so that the pod restarts (controller-runtime's cache sync timeout). 0: wait for ever.",
    ),
  shutdownTimeoutMs: z
    .number()
    .int()
    .positive()
    .default(DEFAULT_SHUTDOWN_TIMEOUT_MS)
    .describe(
      "The whole graceful stop after SIGTERM: in-flight reconciles (aborted past their share), Events, the Lease's release; keep it below the pod's grace period, from which the chart sets it (terminationGracePeriodSeconds less 5 s).",
    ),
};
