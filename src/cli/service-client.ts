/**
 * The process's default service client: built from the operator config, and its
 * assumed operations probed and reported (metric and log).
 */
import type { Logger } from "pino";
import { ConfigError } from "../config/load.js";
import type { OperatorConfig } from "../config/schema.js";
import { sharedServiceClientOptions } from "../controllers/connections/client.js";
import type { RuntimeMetrics } from "../runtime/metrics.js";
import { ServiceClient } from "../service/client.js";
import { ENDPOINT_NAMES } from "../service/endpoints.js";
import { endpointConfigKey } from "../service/errors.js";
import { ASSUMED_OPERATIONS } from "../service/operation-availability.js";
import { type ProxyResolver, ServiceProxyError } from "../service/service-proxy.js";
import type { ServiceCallMetrics } from "../service/transport-options.js";

/** What the service client factory gets. */
export interface ServiceClientDeps {
  config: OperatorConfig;
  apiKey: () => Promise<string>;
  /** Where its calls are recorded (`RuntimeMetrics.serviceCallMetrics`). */
  metrics?: ServiceCallMetrics;
  log: Logger;
  /** The proxy of the service's base URL; default none. */
  proxyFor?: ProxyResolver;
  /** Asked before each call is sent (ServiceClientOptions.mayCall); default always true. */
  mayCall?: () => boolean;
}

/** Builds the process's service client from the config (tests pass their own). */
export function createServiceClient(deps: ServiceClientDeps): ServiceClient {
  const s = deps.config.service;
  try {
    return new ServiceClient({
      ...sharedServiceClientOptions(s, deps.proxyFor),
      baseUrl: s.baseUrl,
      apiKey: deps.apiKey,
      logger: deps.log.child({ component: "service" }),
      ...(deps.metrics ? { metrics: deps.metrics } : {}),
      ...(deps.mayCall ? { mayCall: deps.mayCall } : {}),
    });
  } catch (err) {
    if (err instanceof ServiceProxyError) throw err;
    // The endpoint table refuses unknown names and bad paths: a config error.
    throw new ConfigError(`invalid operator config: service.endpoints: ${(err as Error).message}`);
  }
}

/**
 * Probes the operations whose path is an assumption (in the background: the service
 * may be down at start) and keeps `aidc_service_operation_available` and the log
 * current: one line with every verdict after the probes, a warning whenever an
 * operation goes missing, an info line when one found missing answers again (not when
 * an operation answers for the first time). `run` calls it once the process leads: a
 * standby calls the service nothing and exports no verdict (the leader's alone count).
 */
export function reportServiceOperations(
  service: ServiceClient,
  metrics: RuntimeMetrics,
  log: Logger,
) {
  const endpoints = ENDPOINT_NAMES.filter((n) => service.endpoint(n) !== null);
  for (const name of ASSUMED_OPERATIONS) {
    if (endpoints.includes(name)) metrics.setServiceOperation(name, "unknown");
    else metrics.setServiceOperation(name, "disabled");
  }
  let probed = false;
  service.operations.onChange((operation, verdict, before) => {
    metrics.setServiceOperation(operation, verdict);
    if (!probed) return;
    if (verdict === "missing") {
      log.warn(
        { operation, configKey: endpointConfigKey(operation) },
        "the service does not answer an operation; orders that need it are refused",
      );
    } else if (before === "missing") {
      log.info({ operation }, "the service answers an operation again");
    }
  });
  void service.probeAssumedOperations().then((verdicts) => {
    probed = true;
    const missing = Object.entries(verdicts)
      .filter(([, v]) => v === "missing")
      .map(([name]) => name);
    const line = { operations: verdicts, missing, configKeys: missing.map(endpointConfigKey) };
    if (missing.length > 0) {
      log.warn(line, "the service does not answer some assumed operations; set their paths");
    } else {
      log.info(line, "service operations probed");
    }
  });
}
