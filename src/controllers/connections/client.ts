/**
 * The service client of one ServiceConnection: the operator's `service` settings
 * (timeouts, retries, endpoint table, subscription-result mapping, catalog TTL), with
 * the connection's base URL, key and limits, and its own HTTP agents, rate limiter and
 * caches, so one account's load or failures never reach another's calls.
 */
import type { Logger } from "pino";
import type { OperatorConfig } from "../../config/schema.js";
import type { ServiceRequestInfo } from "../../runtime/metrics.js";
import { ServiceClient, type ServiceClientOptions } from "../../service/client.js";
import type { ConnectionClientSettings } from "./registry.js";

/**
 * Longest a call of a connection waits for that connection's rate limit before it is
 * bounced (`ServiceThrottledError`, retried with backoff): the controllers' workers are
 * shared by every account, so a saturated account must not hold them.
 */
export const CONNECTION_RATE_LIMIT_MAX_WAIT_MS = 1_000;

/** What a connection's client reports to and logs with. */
export interface ConnectionClientHooks {
  /** Every attempt, labelled with the connection (metrics). */
  onRequest?: (info: ServiceRequestInfo) => void;
  log?: Logger;
}

/**
 * The options every service client of the process shares, from the operator's `service`
 * settings: timeouts, retries, the endpoint table, how results read, the caches and the
 * routine budget. The default client (cli/run.ts) and each connection's add their
 * account (base URL, key, limits), logger and metrics hook; a reconcile calls it
 * through the account's calls for it (`ServiceAccount.withCall`: routine or not, its
 * deadline).
 */
export function sharedServiceClientOptions(
  s: OperatorConfig["service"],
): Omit<ServiceClientOptions, "baseUrl" | "apiKey"> {
  return {
    timeoutMs: s.timeoutMs,
    maxResponseBytes: s.maxResponseBytes,
    idleSocketTimeoutMs: s.idleSocketTimeoutMs,
    httpClient: s.httpClient,
    catalogTtlMs: s.catalogTtlMs,
    recheckMissingMs: s.operationRecheckMs,
    subscriptionResult: s.subscriptionResult,
    createTaskFields: s.createTaskFields,
    retry: s.retry,
    rateLimit: s.rateLimit,
    routineShare: s.routineCallShare,
    endpoints: s.endpoints,
  };
}

/** Builds the client of one connection; see the module comment. */
export function connectionClient(
  config: OperatorConfig,
  settings: ConnectionClientSettings,
  hooks: ConnectionClientHooks = {},
): ServiceClient {
  const s = config.service;
  const onRequest = hooks.onRequest;
  return new ServiceClient({
    ...sharedServiceClientOptions(s),
    baseUrl: settings.baseUrl,
    apiKey: settings.apiKey,
    rateLimit: settings.rateLimit ?? s.rateLimit,
    rateLimitMaxWaitMs: CONNECTION_RATE_LIMIT_MAX_WAIT_MS,
    ...(hooks.log
      ? { logger: hooks.log.child({ component: "service", connection: settings.name }) }
      : {}),
    ...(onRequest ? { onRequest: (e) => onRequest({ ...e, connection: settings.name }) } : {}),
  });
}
