import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { type HealthSnapshot, registerHealthMetrics } from "./resource-health.js";
import {
  type OperationVerdict,
  REQUEST_BUCKETS,
  ServiceMetrics,
  type ServiceRequestInfo,
} from "./service-metrics.js";
import type { WorkQueueObserver } from "./workqueue.js";

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
 * Names and labels are controller-runtime's and client-go's where those exist
 * (`controller_runtime_*`, `workqueue_*`, `leader_election_master_status`,
 * `rest_client_*`), so existing dashboards work; the operator's own are `aidc_*`,
 * among them object health (resource-health.ts, once {@link exportResourceHealth} is
 * called). docs/metrics.md lists every metric with its labels and help, generated from
 * this registry (scripts/generate-metrics-docs.ts). Controllers may register their own
 * metrics in {@link registry}.
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
  private readonly queueDepth: Gauge<"controller" | "name">;
  private readonly queueAdds: Counter<"controller" | "name">;
  private readonly queueLatency: Histogram<"controller" | "name">;
  private readonly workDuration: Histogram<"controller" | "name">;
  private readonly retries: Counter<"controller" | "name">;
  private readonly restRequests: Counter<"code" | "method" | "host">;
  private readonly restRateLimitWait: Histogram<"verb" | "host" | "limiter">;
  private readonly restLatency: Histogram<"verb" | "host">;
  private readonly firstReady: Histogram<"kind">;
  /** The calls to the service (`aidc_service_*`). */
  readonly service: ServiceMetrics;
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
    this.service = new ServiceMetrics(registers);
    this.observeServiceRequest = this.service.observeRequest;
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

  /** Records what is known about service operation `operation` ({@link ServiceMetrics.setOperation}). */
  setServiceOperation(operation: string, verdict: OperationVerdict): void {
    this.service.setOperation(operation, verdict);
  }

  /**
   * Exports a controller's reconcile counters at 0 before its first reconcile, as
   * controller-runtime does: a rate over a counter that has no series yet is empty, not
   * 0, and alerts and dashboards read these.
   */
  initReconcileCounters(controller: string): void {
    for (const result of ["success", "error", "requeue_after"]) {
      this.reconcileTotal.inc({ controller, result }, 0);
    }
    this.reconcileErrors.inc({ controller }, 0);
    this.terminalReconcileErrors.inc({ controller }, 0);
  }

  /**
   * The observer a controller's workqueue reports to; its counters and depth are
   * exported at 0 from now on, as client-go's are from the queue's creation.
   */
  workQueueObserver(controller: string): WorkQueueObserver {
    const labels = { controller, name: controller };
    this.queueAdds.inc(labels, 0);
    this.retries.inc(labels, 0);
    this.queueDepth.set(labels, 0);
    return {
      added: () => this.queueAdds.inc(labels),
      depth: (n) => this.queueDepth.set(labels, n),
      queueLatency: (s) => this.queueLatency.observe(labels, s),
      workDuration: (s) => this.workDuration.observe(labels, s),
      retried: () => this.retries.inc(labels),
    };
  }

  /**
   * Records one service API call ({@link ServiceMetrics.observeRequest}). Bound, so it
   * can be passed as the service client's `onRequest` hook as is.
   */
  readonly observeServiceRequest: (info: ServiceRequestInfo) => void;

  /**
   * Records one Kubernetes API request (KubeClient's `onRequest` hook); `limiter` names
   * the client's rate limiter (`requests`, or `events` for the Events' own).
   */
  readonly observeKubeRequest = (info: {
    method: string;
    code: number;
    host?: string;
    rateLimitWaitMs?: number;
    durationMs?: number;
    limiter?: string;
  }): void => {
    const host = info.host ?? "";
    this.restRequests.inc({
      code: info.code ? String(info.code) : "<error>",
      method: info.method,
      host,
    });
    if (info.durationMs !== undefined) {
      this.restLatency.observe({ verb: info.method, host }, info.durationMs / 1000);
    }
    if (info.rateLimitWaitMs !== undefined) {
      this.restRateLimitWait.observe(
        { verb: info.method, host, limiter: info.limiter ?? "requests" },
        info.rateLimitWaitMs / 1000,
      );
    }
  };

  /**
   * A KubeClient's `onRequest` hook: {@link observeKubeRequest} with the API server's
   * `host` and the client's `limiter`.
   */
  kubeRequestObserver(
    host: string,
    limiter: string,
  ): (info: { method: string; code: number; rateLimitWaitMs?: number }) => void {
    return (info) => this.observeKubeRequest({ ...info, host, limiter });
  }

  /** The text exposition of every metric. */
  text(): Promise<string> {
    return this.registry.metrics();
  }
}
