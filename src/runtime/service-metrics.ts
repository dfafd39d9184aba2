/**
 * The metrics of the calls to the Compute and Storage Service (`aidc_service_*`),
 * part of {@link RuntimeMetrics}: requests, durations and rate-limit waits per
 * connection (account), and which operations the service answers.
 */
import { Counter, Gauge, Histogram, type Registry } from "prom-client";

/** Buckets for calls to a remote HTTP API. */
export const REQUEST_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** One service API call, as the service client's `onRequest` hook reports it. */
export interface ServiceRequestInfo {
  /** The endpoint's name in the service client's endpoint table. */
  endpoint: string;
  method?: string;
  /** HTTP status, the envelope code, or a word such as `timeout` / `network`. */
  code: number | string;
  durationMs: number;
  /** Time the call waited for the client-side rate limit before it was sent. */
  rateLimitWaitMs?: number;
  /**
   * The call's priority at the rate limit: `normal`, `deferred` for a follow-up read of
   * an object still settling, or `low` for routine observation.
   */
  priority?: string;
  /** Of the wait, what a routine call waited for its connection's routine budget alone. */
  routineBudgetWaitMs?: number;
  /**
   * The service connection (account) the call was made with: a ServiceConnection's
   * name, or {@link DEFAULT_CONNECTION_LABEL} for the operator's default connection.
   */
  connection?: string;
}

/** The `connection` label of calls made with the operator's default connection (its config). */
export const DEFAULT_CONNECTION_LABEL = "_default";

/** What is known about one service operation (see `aidc_service_operation_available`). */
export type OperationVerdict = "present" | "missing" | "unknown" | "disabled";

/** The `aidc_service_*` metrics, registered in the registries given. */
export class ServiceMetrics {
  private readonly requests: Counter<"endpoint" | "code" | "connection">;
  private readonly duration: Histogram<"endpoint" | "connection">;
  private readonly rateLimitWait: Histogram<"priority" | "connection">;
  private readonly routineBudgetWait: Counter<"connection">;
  private readonly operationAvailable: Gauge<"operation">;

  constructor(registers: Registry[]) {
    this.requests = new Counter({
      name: "aidc_service_requests_total",
      help: "Calls to the Compute and Storage Service API, by endpoint, result code and connection (account)",
      labelNames: ["endpoint", "code", "connection"],
      registers,
    });
    this.duration = new Histogram({
      name: "aidc_service_request_duration_seconds",
      help: "Duration of calls to the Compute and Storage Service API, by endpoint and connection (account)",
      labelNames: ["endpoint", "connection"],
      buckets: REQUEST_BUCKETS,
      registers,
    });
    this.rateLimitWait = new Histogram({
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
      help: "Whether the service answers an operation of the endpoint table: 1 it answers (an envelope, even an error one), 0 found missing (a bare HTTP 404/405: orders that need it are refused until its path is set), -1 not known yet, -2 disabled by the configuration (orders that need it are refused); set for the operations whose path is an assumption and every operation an answer taught about",
      labelNames: ["operation"],
      registers,
    });
  }

  /**
   * Records one service API call. Bound, so it can be passed as the service client's
   * `onRequest` hook as is.
   */
  readonly observeRequest = (info: ServiceRequestInfo): void => {
    const connection = info.connection ?? DEFAULT_CONNECTION_LABEL;
    this.requests.inc({ endpoint: info.endpoint, code: String(info.code), connection });
    this.duration.observe({ endpoint: info.endpoint, connection }, info.durationMs / 1000);
    if (info.rateLimitWaitMs !== undefined) {
      this.rateLimitWait.observe(
        { priority: info.priority ?? "normal", connection },
        info.rateLimitWaitMs / 1000,
      );
    }
    if (info.routineBudgetWaitMs) {
      this.routineBudgetWait.inc({ connection }, info.routineBudgetWaitMs / 1000);
    }
  };

  /** Records what is known about service operation `operation` (see the gauge's help). */
  setOperation(operation: string, verdict: OperationVerdict): void {
    const value = { present: 1, missing: 0, unknown: -1, disabled: -2 }[verdict];
    this.operationAvailable.set({ operation }, value);
  }
}
