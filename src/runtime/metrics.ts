import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { KubeRequestMetrics } from "./kube-options.js";
import { type HealthSnapshot, registerHealthMetrics } from "./resource-health.js";
import type { WorkQueueObserver } from "./workqueue.js";

/** Buckets for calls to a remote HTTP API. */
const REQUEST_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** One service API call, as a connection client's `onRequest` hook reports it (tests). */
export interface ServiceRequestInfo {
  /** The endpoint's name in the service client's endpoint table. */
  endpoint: string;
  method?: string;
  /** HTTP status, the envelope code, or a word such as `timeout` / `network`. */
  code: number | string;
  durationMs: number;
  /** Time the call waited for the client-side rate limit before it was sent. */
  rateLimitWaitMs?: number;
  /** The call's lane at the rate limit: `normal`, `deferred` (follow-ups) or `low` (routine). */
  priority?: string;
  /** Of the wait, what a routine call waited for its connection's routine budget alone. */
  routineBudgetWaitMs?: number;
  /** The connection (account): a ServiceConnection's name, else {@link DEFAULT_CONNECTION_LABEL}. */
  connection?: string;
}

/** The `connection` label of calls made with the operator's default connection (its config). */
export const DEFAULT_CONNECTION_LABEL = "_default";

/** What is known about one service operation (see `aidc_service_operation_available`). */
export type OperationVerdict = "present" | "missing" | "unknown" | "disabled";

/** controller-runtime's reconcile_time_seconds buckets. */
const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1,
  1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];
/** client-go's workqueue buckets: 10^-8 .. 10^3 seconds. */
const QUEUE_BUCKETS = Array.from({ length: 12 }, (_, i) => 10 ** (i - 8));
/**
 * Kubernetes request latency: client-go's buckets with more of them below 100 ms, where
 * an API server's writes are answered (and where a loaded one shows).
 */
const KUBE_LATENCY_BUCKETS = [
  0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60,
];

/**
 * The operator's Prometheus metrics, in a registry of their own (no global state).
 * Names and labels are controller-runtime's and client-go's where those exist, so
 * existing dashboards work; the operator's own are `aidc_*` (service calls, object
 * health: resource-health.ts). docs/metrics.md, generated from this registry, lists
 * them all. Controllers may register their own in {@link registry}.
 */
export class RuntimeMetrics {
  readonly registry = new Registry();
  readonly reconcileTotal: Counter<"controller" | "result">;
  readonly reconcileErrors: Counter<"controller">;
  readonly terminalReconcileErrors: Counter<"controller">;
  readonly reconcileTime: Histogram<"controller">;
  readonly activeWorkers: Gauge<"controller">;
  readonly maxConcurrentReconciles: Gauge<"controller">;
  readonly leaderStatus: Gauge<"name">;
  readonly eventsDropped: Counter<"reason">;
  private readonly queueDepth: Gauge<"controller" | "name">;
  private readonly queueAdds: Counter<"controller" | "name">;
  private readonly queueLatency: Histogram<"controller" | "name">;
  private readonly workDuration: Histogram<"controller" | "name">;
  private readonly retries: Counter<"controller" | "name">;
  private readonly restRequests: Counter<"code" | "method" | "host">;
  private readonly restRateLimitWait: Histogram<"verb" | "host" | "limiter">;
  private readonly restLatency: Histogram<"verb" | "host">;
  private readonly firstReady: Histogram<"kind">;
  private readonly serviceRequests: Counter<"endpoint" | "code" | "connection">;
  private readonly serviceDuration: Histogram<"endpoint" | "connection">;
  private readonly serviceRateLimitWait: Histogram<"priority" | "connection">;
  private readonly routineBudgetWait: Counter<"connection">;
  private readonly operationAvailable: Gauge<"operation">;
  private health: (() => HealthSnapshot) | undefined;

  /** `processMetrics`: also export Node's process_* and nodejs_* metrics (default true). */
  constructor(options: { processMetrics?: boolean } = {}) {
    const registers = [this.registry];
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    this.reconcileTotal = new Counter({
      name: "controller_runtime_reconcile_total",
      help: "Total number of reconciliations per controller",
      labelNames: ["controller", "result"],
      registers,
    });
    this.reconcileErrors = new Counter({
      name: "controller_runtime_reconcile_errors_total",
      help: "Total number of reconciliation errors per controller",
      labelNames: ["controller"],
      registers,
    });
    this.terminalReconcileErrors = new Counter({
      name: "controller_runtime_terminal_reconcile_errors_total",
      help: "Total number of terminal reconciliation errors per controller",
      labelNames: ["controller"],
      registers,
    });
    this.reconcileTime = new Histogram({
      name: "controller_runtime_reconcile_time_seconds",
      help: "Length of time per reconciliation per controller",
      labelNames: ["controller"],
      buckets: RECONCILE_BUCKETS,
      registers,
    });
    this.activeWorkers = new Gauge({
      name: "controller_runtime_active_workers",
      help: "Number of currently used workers per controller",
      labelNames: ["controller"],
      registers,
    });
    this.maxConcurrentReconciles = new Gauge({
      name: "controller_runtime_max_concurrent_reconciles",
      help: "Maximum number of concurrent reconciles per controller (its concurrency for each of four connections at once)",
      labelNames: ["controller"],
      registers,
    });
    this.leaderStatus = new Gauge({
      name: "leader_election_master_status",
      help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master",
      labelNames: ["name"],
      registers,
    });
    this.eventsDropped = new Counter({
      name: "aidc_events_dropped_total",
      help: "Events (and counts of an Event's series) the operator recorded but did not write, by reason: unanswered (the API server did not answer any of its tries: 12, 10 s apart, or it was the oldest of more than 1000 waiting for their next try, or the operator stopped), refused (the API server answered with an error: 403 for missing RBAC, 422, an admission webhook); the spam filter's drops are not counted",
      labelNames: ["reason"],
      registers,
    });
    const q = ["controller", "name"] as const;
    this.queueDepth = new Gauge({
      name: "workqueue_depth",
      help: "Current depth of workqueue",
      labelNames: q,
      registers,
    });
    this.queueAdds = new Counter({
      name: "workqueue_adds_total",
      help: "Total number of adds handled by workqueue",
      labelNames: q,
      registers,
    });
    this.queueLatency = new Histogram({
      name: "workqueue_queue_duration_seconds",
      help: "How long in seconds an item stays in workqueue before being requested",
      labelNames: q,
      buckets: QUEUE_BUCKETS,
      registers,
    });
    this.workDuration = new Histogram({
      name: "workqueue_work_duration_seconds",
      help: "How long in seconds processing an item from workqueue takes",
      labelNames: q,
      buckets: QUEUE_BUCKETS,
      registers,
    });
    this.retries = new Counter({
      name: "workqueue_retries_total",
      help: "Total number of retries handled by workqueue",
      labelNames: q,
      registers,
    });
    this.restRequests = new Counter({
      name: "rest_client_requests_total",
      help: "Number of HTTP requests to the Kubernetes API, partitioned by status code, method, and host",
      labelNames: ["code", "method", "host"],
      registers,
    });
    this.restLatency = new Histogram({
      name: "rest_client_request_duration_seconds",
      help: "Request latency in seconds of Kubernetes API requests, from sent to answered (after the client-side rate limit), by verb and host",
      labelNames: ["verb", "host"],
      buckets: KUBE_LATENCY_BUCKETS,
      registers,
    });
    this.restRateLimitWait = new Histogram({
      name: "rest_client_rate_limiter_duration_seconds",
      help: "Time Kubernetes API requests waited for the client-side rate limit (kube.qps and kube.burst per connection, kube.totalQps and kube.totalBurst in all), by verb, host and limiter (requests: the reconciles', informers' and the Lease's; events: the Events' own)",
      labelNames: ["verb", "host", "limiter"],
      buckets: REQUEST_BUCKETS,
      registers,
    });
    this.serviceRequests = new Counter({
      name: "aidc_service_requests_total",
      help: "Calls to the Compute and Storage Service API, by endpoint, result code and connection (account)",
      labelNames: ["endpoint", "code", "connection"],
      registers,
    });
    this.serviceDuration = new Histogram({
      name: "aidc_service_request_duration_seconds",
      help: "Duration of calls to the Compute and Storage Service API, by endpoint and connection (account)",
      labelNames: ["endpoint", "connection"],
      buckets: REQUEST_BUCKETS,
      registers,
    });
    this.serviceRateLimitWait = new Histogram({
      name: "aidc_service_rate_limit_wait_seconds",
      help: "Time calls to the service waited for the client-side rate limit (service.rateLimit), by priority (low: routine observation of settled objects, which waits behind the rest; deferred: follow-up reads of objects still settling, which wait behind new work); long low waits mean the polls need more than the limit allows, long normal waits that new work waits too; each connection has its own limit",
      labelNames: ["priority", "connection"],
      buckets: REQUEST_BUCKETS,
      registers,
    });
    this.routineBudgetWait = new Counter({
      name: "aidc_service_routine_budget_wait_seconds_total",
      help: "Time routine calls to the service (polls of settled objects, list walks) waited for their connection's routine budget alone (service.routineCallShare of its rate limit): when it grows, observation runs slower than configured because the fleet needs more calls than the budget allows",
      labelNames: ["connection"],
      registers,
    });
    this.operationAvailable = new Gauge({
      name: "aidc_service_operation_available",
      help: "Whether the service answers an operation of the endpoint table: 1 it answers (an envelope, even an error one), 0 found missing (a bare HTTP 404/405: orders that need it are refused until its path is set), -1 not known yet, -2 disabled by the configuration (orders that need it are refused); set by the leader (a standby asks the service nothing) for the operations whose path is an assumption and every operation an answer taught about",
      labelNames: ["operation"],
      registers,
    });
    this.firstReady = registerHealthMetrics(registers, () => this.health?.());
  }

  /**
   * Exports object health (the `aidc_managed_resources*` gauges) from `snapshot`, which
   * a scrape calls (resource-health.ts); the Manager wires it.
   */
  exportResourceHealth(snapshot: () => HealthSnapshot): void {
    this.health = snapshot;
  }

  /** Records an object's time from creation to its first Ready. */
  observeFirstReady(kind: string, seconds: number): void {
    this.firstReady.observe({ kind }, seconds);
  }

  /** Records what is known about service operation `operation` (see the gauge's help). */
  setServiceOperation(operation: string, verdict: OperationVerdict): void {
    const value = { present: 1, missing: 0, unknown: -1, disabled: -2 }[verdict];
    this.operationAvailable.set({ operation }, value);
  }

  /**
   * The observer a controller's workqueue records to: the workqueue metrics' children
   * of its labels, which the queue calls directly. Its counters and depth are exported
   * at 0 from now on, as client-go's are from the queue's creation.
   */
  workQueueObserver(controller: string): WorkQueueObserver {
    const labels = { controller, name: controller };
    const observer = {
      adds: this.queueAdds.labels(labels),
      depth: this.queueDepth.labels(labels),
      queueLatency: this.queueLatency.labels(labels),
      workDuration: this.workDuration.labels(labels),
      retries: this.retries.labels(labels),
    };
    observer.adds.inc(0);
    observer.retries.inc(0);
    observer.depth.set(0);
    return observer;
  }

  /**
   * What a service client records its calls to (its `metrics` option, the transport of
   * src/service): the aidc_service_* call metrics, with the `connection` label of its
   * account (a ServiceConnection's name, else {@link DEFAULT_CONNECTION_LABEL}).
   */
  serviceCallMetrics(connection = DEFAULT_CONNECTION_LABEL) {
    const { serviceRequests: requests, serviceDuration: duration } = this;
    const { serviceRateLimitWait: rateLimitWait, routineBudgetWait } = this;
    return { connection, requests, duration, rateLimitWait, routineBudgetWait };
  }

  /**
   * What a KubeClient records its requests to (its `metrics` option, kube.ts): the
   * rest_client metrics, with the API server's `host` and the client's rate limiter,
   * `limiter` (`requests`, or `events` for the Events' own).
   */
  kubeRequestMetrics(host: string, limiter: string): KubeRequestMetrics {
    const { restRequests: requests, restLatency: latency, restRateLimitWait: rateLimitWait } = this;
    return { host, limiter, requests, latency, rateLimitWait };
  }

  /** The text exposition of every metric. */
  text(): Promise<string> {
    return this.registry.metrics();
  }
}
