import { describe, expect, it } from "vitest";
import {
  DEFAULT_BACKOFF,
  DEFAULT_CONCURRENCY,
  DEFAULT_HEALTH_PORT,
  DEFAULT_HOLD_BACKOFF,
  DEFAULT_KUBE_MAX_IN_FLIGHT,
  DEFAULT_KUBE_RATE_LIMIT,
  DEFAULT_KUBE_TOTAL_RATE_LIMIT,
  DEFAULT_LEASE_TIMINGS,
  DEFAULT_RECONCILE_TIMEOUT_MS,
  DEFAULT_RESYNC_JITTER,
  DEFAULT_RESYNC_PERIOD_MS,
  DEFAULT_SHUTDOWN_TIMEOUT_MS,
  DEFAULT_WATCHDOG_MS,
} from "../runtime/defaults.js";
import {
  DEFAULT_CATALOG_TTL_MS,
  DEFAULT_LIST_VISIBILITY_WINDOW_MS,
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_NAS_SCALE_SETTLE_MS,
  DEFAULT_RATE_LIMIT,
  DEFAULT_RECHECK_MISSING_MS,
  DEFAULT_RETRY_POLICY,
  DEFAULT_TIMEOUT_MS,
} from "../service/defaults.js";
import { DEFAULT_CREATE_TASK_FIELDS } from "../service/endpoints.js";
import { concurrencyFor, operatorConfigSchema } from "./schema.js";

/**
 * The config's defaults against what the runtime and the service client use when built
 * without the config (test operators, `uninstall-check`): one figure each, so that
 * those run as the installed operator does. Before, the Kubernetes client defaulted to
 * 20/30 requests per second while the config said 50/100.
 */
describe("the config's defaults are the runtime's and the service client's", () => {
  const config = operatorConfigSchema.parse({ service: { baseUrl: "https://aidc.invalid" } });

  it("for the runtime (Kubernetes client, manager, informers, leader election)", () => {
    expect({ qps: config.kube.qps, burst: config.kube.burst }).toEqual(DEFAULT_KUBE_RATE_LIMIT);
    expect(DEFAULT_KUBE_RATE_LIMIT).toEqual({ qps: 50, burst: 100 });
    expect({ qps: config.kube.totalQps, burst: config.kube.totalBurst }).toEqual(
      DEFAULT_KUBE_TOTAL_RATE_LIMIT,
    );
    expect(config.kube.maxInFlight).toBe(DEFAULT_KUBE_MAX_IN_FLIGHT);
    expect(config.kube.watchdogMs).toBe(DEFAULT_WATCHDOG_MS);
    expect(concurrencyFor(config, "any")).toBe(DEFAULT_CONCURRENCY);
    expect(config.reconcileTimeoutMs).toBe(DEFAULT_RECONCILE_TIMEOUT_MS);
    expect(config.backoff).toEqual(DEFAULT_BACKOFF);
    expect(config.holdBackoff).toEqual(DEFAULT_HOLD_BACKOFF);
    expect(config.resyncPeriodMs).toBe(DEFAULT_RESYNC_PERIOD_MS);
    expect(config.resyncJitter).toBe(DEFAULT_RESYNC_JITTER);
    expect(config.shutdownTimeoutMs).toBe(DEFAULT_SHUTDOWN_TIMEOUT_MS);
    expect(config.server.port).toBe(DEFAULT_HEALTH_PORT);
    const { leaseDurationMs, renewDeadlineMs, retryPeriodMs } = config.leaderElection;
    expect({ leaseDurationMs, renewDeadlineMs, retryPeriodMs }).toEqual(DEFAULT_LEASE_TIMINGS);
  });

  it("for the service client and what the operator assumes of the service", () => {
    const s = config.service;
    expect(s.retry).toEqual(DEFAULT_RETRY_POLICY);
    expect(s.rateLimit).toEqual(DEFAULT_RATE_LIMIT);
    expect(s.timeoutMs).toBe(DEFAULT_TIMEOUT_MS);
    expect(s.maxResponseBytes).toBe(DEFAULT_MAX_RESPONSE_BYTES);
    expect(s.catalogTtlMs).toBe(DEFAULT_CATALOG_TTL_MS);
    expect(s.operationRecheckMs).toBe(DEFAULT_RECHECK_MISSING_MS);
    expect(s.listVisibilityWindowMs).toBe(DEFAULT_LIST_VISIBILITY_WINDOW_MS);
    expect(s.nasScaleSettleMs).toBe(DEFAULT_NAS_SCALE_SETTLE_MS);
    expect(s.createTaskFields).toEqual(DEFAULT_CREATE_TASK_FIELDS);
  });

  it("fills a section given in part with the defaults of the rest", () => {
    const partial = operatorConfigSchema.parse({
      service: { baseUrl: "https://aidc.invalid", retry: { maxAttempts: 2 } },
      kube: { qps: 5 },
    });
    expect(partial.service.retry).toEqual({ ...DEFAULT_RETRY_POLICY, maxAttempts: 2 });
    expect(partial.kube).toEqual({
      qps: 5,
      burst: DEFAULT_KUBE_RATE_LIMIT.burst,
      totalQps: DEFAULT_KUBE_TOTAL_RATE_LIMIT.qps,
      totalBurst: DEFAULT_KUBE_TOTAL_RATE_LIMIT.burst,
      maxInFlight: DEFAULT_KUBE_MAX_IN_FLIGHT,
      watchdogMs: DEFAULT_WATCHDOG_MS,
    });
  });
});
