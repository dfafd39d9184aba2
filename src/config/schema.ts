import { z } from "zod";
import {
  DEFAULT_BACKOFF,
  DEFAULT_CONCURRENCY,
  DEFAULT_HEALTH_PORT,
  DEFAULT_HOLD_BACKOFF,
  DEFAULT_KUBE_RATE_LIMIT,
  DEFAULT_LEASE_TIMINGS,
  DEFAULT_RECONCILE_TIMEOUT_MS,
  DEFAULT_RESYNC_JITTER,
  DEFAULT_RESYNC_PERIOD_MS,
  DEFAULT_SHUTDOWN_TIMEOUT_MS,
  DEFAULT_WATCHDOG_MS,
} from "../runtime/defaults.js";
import { parseCidr } from "./cidr.js";
import { objectStorageSchema } from "./object-storage-schema.js";
import { serviceSchema } from "./service-schema.js";

/**
 * The operator config (`aidc-operator run`), validated with zod. Every object is
 * strict: an unknown (misspelt) field is an error naming it. Durations are in ms.
 * Sources, later ones winning: defaults, the file (`--config`, YAML or JSON),
 * environment (`AIDC_*`), flags. See docs in src/config/README.md.
 *
 * A default the runtime or the service client also applies when built without the
 * config (tests, `uninstall-check`) is read from its home (src/runtime/defaults.ts,
 * src/service/defaults.ts), never written here again; objects `prefault` to `{}` so
 * that their fields' defaults are not repeated either.
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

const leaderElectionSchema = z
  .strictObject({
    /** Elect a leader on a Lease; needed with more than one replica. */
    enabled: z.boolean().default(false),
    leaseName: z.string().min(1).default("aidc-operator-leader"),
    /** Default: `POD_NAMESPACE` (set by the chart). */
    leaseNamespace: z.string().min(1).optional(),
    leaseDurationMs: ms.default(DEFAULT_LEASE_TIMINGS.leaseDurationMs),
    renewDeadlineMs: ms.default(DEFAULT_LEASE_TIMINGS.renewDeadlineMs),
    retryPeriodMs: ms.default(DEFAULT_LEASE_TIMINGS.retryPeriodMs),
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
  /** The default connection's object storage (the Bucket kind). */
  objectStorage: objectStorageSchema.prefault({}),
  /** Namespaces whose objects are reconciled; empty = all. */
  watchNamespaces: z.array(z.string().min(1)).default([]),
  /**
   * Which namespaces may bind their objects to remote resources the operator did not
   * create for them: the `aidc.io/external-id` annotation set by hand, NasVolume
   * `spec.storageId`, raw `storageId` mounts, and every CciInstance. Names, or `"*"` for
   * all (a single-tenant install). Default none: a namespace then uses only what its
   * own objects created (docs/install.md, Security model).
   */
  adoption: z.strictObject({ namespaces: z.array(z.string().min(1)).default([]) }).prefault({}),
  /** Service connections (ServiceConnection objects, docs/controllers.md). */
  connections: z
    .strictObject({
      /**
       * The one namespace whose Secrets the operator reads (the API keys and S3
       * credentials ServiceConnections name), through a Role there: no cluster-wide
       * Secret read. Default `POD_NAMESPACE` (the chart's release namespace); unset and
       * without it, no Secret is read and every ServiceConnection is SecretUnreadable.
       */
      secretNamespace: z.string().min(1).optional(),
    })
    .prefault({}),
  /** Poll interval of each kind while its remote resource may change: `{ default, <Kind>: ms }`. */
  pollIntervalMs: perName(ms, 30_000),
  /** Every object is reconciled again after about this long, even without a change. 0 disables. */
  resyncPeriodMs: z.number().int().min(0).default(DEFAULT_RESYNC_PERIOD_MS),
  /** Fraction of the resync period added at random, so objects do not resync together. */
  resyncJitter: z.number().min(0).max(1).default(DEFAULT_RESYNC_JITTER),
  /**
   * Workers per controller: `{ default, <controller>: n }`. A worker is an async task,
   * not a thread; 16 keeps objects whose service calls hang from starving the rest
   * (docs/performance.md, "Workers").
   */
  concurrency: perName(z.number().int().min(1).max(64), DEFAULT_CONCURRENCY),
  /**
   * Longest one reconcile may hold a worker: past it, the reconcile is abandoned (its
   * service calls aborted, its later writes refused) and its key retried with backoff.
   * 0 disables the bound.
   */
  reconcileTimeoutMs: z.number().int().min(0).default(DEFAULT_RECONCILE_TIMEOUT_MS),
  /** Retry backoff of a failing key (per key, exponential). */
  backoff: z
    .strictObject({
      baseMs: ms.default(DEFAULT_BACKOFF.baseMs),
      maxMs: ms.default(DEFAULT_BACKOFF.maxMs),
    })
    .prefault({}),
  /**
   * Retry of an object held by a failure the service caused (API key refused, a
   * missing operation, an answer of an unknown shape): per object, exponential from
   * `baseMs` up to `maxMs`, besides the immediate retry when the API key changes.
   * Failures of the object's own spec are not retried; they wait for a spec change.
   */
  holdBackoff: z
    .strictObject({
      baseMs: ms.default(DEFAULT_HOLD_BACKOFF.baseMs),
      maxMs: ms.default(DEFAULT_HOLD_BACKOFF.maxMs),
    })
    .refine((b) => b.maxMs >= b.baseMs, {
      message: "must be at least holdBackoff.baseMs",
      path: ["maxMs"],
    })
    .prefault({}),
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
        .prefault({}),
    })
    .prefault({}),
  /** The Kubernetes API client. */
  kube: z
    .strictObject({
      /**
       * Requests per second to the API server, and burst; why 50/100, see
       * `DEFAULT_KUBE_RATE_LIMIT`. Events have a limiter of their own with the same
       * figures (as client-go's recorder, on its own REST client), so that Events never
       * take a reconcile's tokens; it is not configurable on its own: Events are bounded
       * by their spam filter (25 new ones per object, then one per 5 min) and their
       * series (repeats), and a create records 2: one figure for both is enough.
       */
      qps: z.number().positive().default(DEFAULT_KUBE_RATE_LIMIT.qps),
      burst: z.number().int().min(1).default(DEFAULT_KUBE_RATE_LIMIT.burst),
      /** A watch silent for this long is restarted. */
      watchdogMs: ms.default(DEFAULT_WATCHDOG_MS),
    })
    .prefault({}),
  leaderElection: leaderElectionSchema.prefault({}),
  /** The /metrics, /healthz and /readyz server. */
  server: z
    .strictObject({
      port: port.default(DEFAULT_HEALTH_PORT),
      host: z.string().min(1).default("0.0.0.0"),
    })
    .prefault({}),
  /** How long in-flight reconciles may run after SIGTERM. */
  shutdownTimeoutMs: ms.default(DEFAULT_SHUTDOWN_TIMEOUT_MS),
  log: z
    .strictObject({
      level: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
    })
    .prefault({}),
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
