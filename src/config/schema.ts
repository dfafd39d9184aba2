import { z } from "zod";
import { parseCidr } from "./cidr.js";

/**
 * The operator config (`aidc-operator run`), validated with zod. Every object is
 * strict: an unknown (misspelt) field is an error naming it. Durations are in ms.
 * Sources, later ones winning: defaults, the file (`--config`, YAML or JSON),
 * environment (`AIDC_*`), flags. See docs in src/config/README.md.
 */

const ms = z.number().int().positive();
const port = z.number().int().min(0).max(65_535);

/** A `{ default, <name>: value }` map: one value for everything and overrides by name. */
const perName = (value: z.ZodNumber, fallback: number) =>
  z
    .record(z.string().min(1), value)
    .default({ default: fallback })
    .transform((r): Record<string, number> & { default: number } => ({
      ...r,
      default: r.default ?? fallback,
    }));

/** What a config without `service.baseUrl` is told. */
export const BASE_URL_REQUIRED =
  "required: the base URL of the Compute and Storage Service API (the chart's value service.baseUrl, or AIDC_SERVICE_BASE_URL)";

/** The service API client's settings. */
const serviceSchema = z
  .strictObject({
    /**
     * `{base_url}` of the service. Required, with no default: an operator that silently
     * talked to a local address would look healthy while doing nothing. `aidc-operator
     * dev` and the tests set it to their emulator.
     */
    baseUrl: z.url({
      protocol: /^https?$/,
      error: (issue) => (issue.input === undefined ? BASE_URL_REQUIRED : undefined),
    }),
    /**
     * Allows an `http://` base URL, which sends the API key unencrypted: for a local
     * emulator, the playground and tests only.
     */
    allowInsecureHttp: z.boolean().default(false),
    /**
     * Longest response body read, in bytes: a longer answer is cut off and reported as a
     * malformed answer, so a hostile or broken service cannot exhaust the memory.
     */
    maxResponseBytes: z
      .number()
      .int()
      .min(1024)
      .default(4 * 1024 * 1024),
    /**
     * File holding the API key (the mounted Secret). Read on every request, so a rotated
     * Secret takes effect without a restart. `AIDC_API_KEY` (environment) is the
     * alternative; the key itself never appears in the config file or logs.
     */
    apiKeyFile: z.string().min(1).optional(),
    /**
     * How often the key file is read again: a rotated key is used, and the objects held
     * by a refused key are retried, at most this long after the file changed.
     */
    apiKeyRefreshMs: ms.default(10_000),
    /** Timeout of one HTTP attempt. */
    timeoutMs: ms.default(10_000),
    /** Retries of idempotent calls. */
    retry: z
      .strictObject({
        maxAttempts: z.number().int().min(1).default(4),
        baseDelayMs: ms.default(200),
        maxDelayMs: ms.default(5_000),
      })
      .default({ maxAttempts: 4, baseDelayMs: 200, maxDelayMs: 5_000 }),
    /** Client-side token bucket; `null` disables it. */
    rateLimit: z
      .strictObject({
        ratePerSecond: z.number().positive().default(50),
        burst: z.number().int().min(1).default(100),
      })
      .nullable()
      .default({ ratePerSecond: 50, burst: 100 }),
    /** How long a product catalog answer is reused (preflights); 0 reads it every time. */
    catalogTtlMs: z.number().int().min(0).default(30_000),
    /**
     * How long the verdict "the service does not answer this operation" (a bare 404)
     * stands before the operation is probed again, so a path that comes back is noticed.
     */
    operationRecheckMs: ms.default(10_000),
    /**
     * Wire names of the task create's fields the spec's field list lacks: the source of
     * a COPY (`sourceTaskId`) and of a TEMPLATE create (`templateId`).
     */
    createTaskFields: z
      .strictObject({
        sourceTaskId: z
          .string()
          .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
          .default("sourceTaskId"),
        templateId: z
          .string()
          .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
          .default("templateId"),
      })
      .default({ sourceTaskId: "sourceTaskId", templateId: "templateId" }),
    /**
     * How the service's subscription results read, where they differ from the shapes
     * the client recognises (docs/service-assumptions.md): the fields holding the
     * state, the created id and the message, and state values (words or numbers as
     * text) mapped to `Pending`, `Succeeded` or `Failed`, e.g. `{ "2": "Succeeded" }`.
     */
    subscriptionResult: z
      .strictObject({
        stateField: z.string().min(1).optional(),
        instanceIdField: z.string().min(1).optional(),
        messageField: z.string().min(1).optional(),
        states: z.record(z.string().min(1), z.enum(["Pending", "Succeeded", "Failed"])).default({}),
      })
      .default({ states: {} }),
    /**
     * How long after a create the service may take to show the new task, NAS or
     * template in its list operations (e.g. only once the order completed). A create
     * whose outcome is unknown (a 5xx, a timeout, a lost answer) is looked up by its
     * client token this long and never sent again by itself; after it the object stops
     * with CreateOutcomeUnknown for the user to decide. A resource absent from complete
     * listings counts as deleted outside the cluster only after it.
     */
    listVisibilityWindowMs: ms.default(600_000),
    /** Endpoint table overrides: `"/path"` or `"METHOD /path"` enables or moves one, `null` disables it. */
    endpoints: z.record(z.string().min(1), z.string().min(1).nullable()).default({}),
  })
  .superRefine((s, ctx) => {
    if (s.baseUrl.startsWith("http://") && !s.allowInsecureHttp) {
      ctx.addIssue({
        code: "custom",
        path: ["baseUrl"],
        message: `${s.baseUrl} is plain http, which would send the API key unencrypted: use an https:// URL, or set service.allowInsecureHttp: true (a local emulator or playground only)`,
      });
    }
  });

const leaderElectionSchema = z
  .strictObject({
    /** Elect a leader on a Lease; needed with more than one replica. */
    enabled: z.boolean().default(false),
    leaseName: z.string().min(1).default("aidc-operator-leader"),
    /** Default: `POD_NAMESPACE` (set by the chart). */
    leaseNamespace: z.string().min(1).optional(),
    leaseDurationMs: ms.default(15_000),
    renewDeadlineMs: ms.default(10_000),
    retryPeriodMs: ms.default(2_000),
  })
  .refine((le) => le.leaseDurationMs > le.renewDeadlineMs, {
    message: "must be greater than leaderElection.renewDeadlineMs",
    path: ["leaseDurationMs"],
  })
  .refine((le) => le.renewDeadlineMs > le.retryPeriodMs, {
    message: "must be greater than leaderElection.retryPeriodMs",
    path: ["renewDeadlineMs"],
  });

/** The whole operator config. */
export const operatorConfigSchema = z.strictObject({
  // prefault: a config without `service` is parsed as `service: {}`, so that the missing
  // base URL is reported by name.
  service: serviceSchema.prefault({} as z.input<typeof serviceSchema>),
  /** Namespaces whose objects are reconciled; empty = all. */
  watchNamespaces: z.array(z.string().min(1)).default([]),
  /**
   * Which namespaces may bind their objects to remote resources the operator did not
   * create for them: the `aidc.io/external-id` annotation set by hand, NasVolume
   * `spec.storageId`, raw `storageId` mounts, and every CciInstance. Names, or `"*"` for
   * all (a single-tenant install). Default none: a namespace then uses only what its
   * own objects created (docs/install.md, Security model).
   */
  adoption: z
    .strictObject({ namespaces: z.array(z.string().min(1)).default([]) })
    .default({ namespaces: [] }),
  /** Poll interval of each kind while its remote resource may change: `{ default, <Kind>: ms }`. */
  pollIntervalMs: perName(ms, 30_000),
  /** Every object is reconciled again after about this long, even without a change. 0 disables. */
  resyncPeriodMs: z.number().int().min(0).default(600_000),
  /** Fraction of the resync period added at random, so objects do not resync together. */
  resyncJitter: z.number().min(0).max(1).default(0.1),
  /**
   * Workers per controller: `{ default, <controller>: n }`. A worker is an async task,
   * not a thread; 16 keeps objects whose service calls hang from starving the rest
   * (docs/performance.md, "Workers").
   */
  concurrency: perName(z.number().int().min(1).max(64), 16),
  /**
   * Longest one reconcile may hold a worker: past it, the reconcile is abandoned (its
   * service calls aborted, its later writes refused) and its key retried with backoff.
   * 0 disables the bound.
   */
  reconcileTimeoutMs: z.number().int().min(0).default(60_000),
  /** Retry backoff of a failing key (per key, exponential). */
  backoff: z
    .strictObject({ baseMs: ms.default(100), maxMs: ms.default(300_000) })
    .default({ baseMs: 100, maxMs: 300_000 }),
  /**
   * Retry of an object held by a failure the service caused (API key refused, a
   * missing operation, an answer of an unknown shape): per object, exponential from
   * `baseMs` up to `maxMs`, besides the immediate retry when the API key changes.
   * Failures of the object's own spec are not retried; they wait for a spec change.
   */
  holdBackoff: z
    .strictObject({ baseMs: ms.default(15_000), maxMs: ms.default(300_000) })
    .refine((b) => b.maxMs >= b.baseMs, {
      message: "must be at least holdBackoff.baseMs",
      path: ["maxMs"],
    })
    .default({ baseMs: 15_000, maxMs: 300_000 }),
  /** TrainingJob controller settings. */
  trainingJob: z
    .strictObject({
      /**
       * Remote task status words (any case) → `pending`, `running`, `succeeded`, `failed` or
       * `stopped`, over the built-in table (docs/controllers.md, TrainingJob).
       */
      statusClasses: z
        .record(z.string().min(1), z.enum(["pending", "running", "succeeded", "failed", "stopped"]))
        .default({}),
      /**
       * `spec.exposePorts`: a Service and an EndpointSlice per open port. Off by default,
       * and then the operator is granted no write on Services or EndpointSlices (the
       * chart value `exposure.enabled` sets both).
       */
      exposure: z
        .strictObject({
          enabled: z.boolean().default(false),
          /**
           * The ranges an open port's external address (the service's `externalHost`)
           * must lie in to become an EndpointSlice address; any other address (a pod or
           * node IP, loopback, the metadata address, a hostname) is refused with the
           * condition ExposureAddressRefused. Default none: the operator cannot know the
           * service's gateway network, and any open default would let a service answer
           * aim an in-cluster Service at an internal address. Set the gateway's range
           * when enabling exposure.
           */
          allowedCidrs: z
            .array(
              z.string().refine((c) => parseCidr(c) !== undefined, {
                message: "expected a CIDR range such as 203.0.113.0/24 or 2001:db8::/32",
              }),
            )
            .default([]),
        })
        .default({ enabled: false, allowedCidrs: [] }),
    })
    .default({ statusClasses: {}, exposure: { enabled: false, allowedCidrs: [] } }),
  /** The Kubernetes API client. */
  kube: z
    .strictObject({
      /**
       * Requests per second to the API server, and burst (Events have a limiter of
       * their own with the same figures). Above client-go's 20/30: a create costs 4
       * writes plus 2 Events, and at 20/s the client limit, not the work, set the time
       * to Ready (bench: 60 objects 22.5 s at 20/s, 7 s at 200/s); the API server still
       * protects itself with priority and fairness.
       */
      qps: z.number().positive().default(50),
      burst: z.number().int().min(1).default(100),
      /** A watch silent for this long is restarted. */
      watchdogMs: ms.default(300_000),
    })
    .default({ qps: 50, burst: 100, watchdogMs: 300_000 }),
  leaderElection: leaderElectionSchema.default(leaderElectionSchema.parse({})),
  /** The /metrics, /healthz and /readyz server. */
  server: z
    .strictObject({ port: port.default(8080), host: z.string().min(1).default("0.0.0.0") })
    .default({ port: 8080, host: "0.0.0.0" }),
  /** How long in-flight reconciles may run after SIGTERM. */
  shutdownTimeoutMs: ms.default(20_000),
  log: z
    .strictObject({
      level: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
    })
    .default({ level: "info" }),
});

/** The validated config, defaults filled in. */
export type OperatorConfig = z.output<typeof operatorConfigSchema>;

/** The poll interval of a kind (its own entry, else `default`). */
export function pollIntervalFor(config: OperatorConfig, kind: string): number {
  return config.pollIntervalMs[kind] ?? config.pollIntervalMs.default;
}

/** The workers of a controller (its own entry, else `default`). */
export function concurrencyFor(config: OperatorConfig, controller: string): number {
  return config.concurrency[controller] ?? config.concurrency.default;
}
