import { z } from "zod";
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
  DEFAULT_WATCHDOG_MS,
} from "../runtime/defaults.js";
import { CIDR_SHAPE, parseCidr } from "./cidr.js";
import { lifecycleSettings } from "./lifecycle-schema.js";
import { objectStorageSchema } from "./object-storage-schema.js";
import { longestAtLeastFirst, serviceSchema } from "./service-schema.js";

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
const CIDR_EXPECTED = "expected a CIDR range such as 203.0.113.0/24 or 2001:db8::/32";

/** A lower-case DNS label (RFC 1123), as Kubernetes requires of namespace names. */
const dnsLabel = (what: string) =>
  z
    .string()
    .max(63)
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, `${what}a lower-case DNS label (a-z, 0-9, '-')`);
/** A namespace name: a misspelt one (`Team_A`) would match no namespace and do nothing. */
export const namespaceName = dnsLabel("a namespace name: ");

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
    enabled: z
      .boolean()
      .default(false)
      .describe(
        "Elect a leader on a Lease; needed with more than one replica (the chart turns it on).",
      ),
    leaseName: z.string().min(1).default("aidc-operator-leader").describe("Name of the Lease."),
    leaseNamespace: namespaceName
      .optional()
      .describe(
        "Namespace of the Lease. Default `POD_NAMESPACE` (the operator's own); required when enabled.",
      ),
    leaseDurationMs: ms
      .default(DEFAULT_LEASE_TIMINGS.leaseDurationMs)
      .describe("How long a Lease holds without renewal; greater than `renewDeadlineMs`."),
    renewDeadlineMs: ms
      .default(DEFAULT_LEASE_TIMINGS.renewDeadlineMs)
      .describe(
        "How long the leader tries to renew before it gives up leading; greater than `retryPeriodMs`.",
      ),
    retryPeriodMs: ms
      .default(DEFAULT_LEASE_TIMINGS.retryPeriodMs)
      .describe("Interval of the tries to acquire or renew the Lease."),
  })
  .refine((le) => le.leaseDurationMs > le.renewDeadlineMs, {
    message: "must be greater than leaderElection.renewDeadlineMs",
    path: ["leaseDurationMs"],
  })
  .refine((le) => le.renewDeadlineMs > le.retryPeriodMs, {
    message: "must be greater than leaderElection.retryPeriodMs",
    path: ["renewDeadlineMs"],
  });

/**
 * The whole operator config. Each field's `.describe()` text is its entry in
 * docs/configuration.md (scripts/generate-config-docs.ts), where a field without one
 * fails the generator.
 */
export const operatorConfigSchema = z.strictObject({
  // prefault: a config without `service` is parsed as `service: {}`, so that the missing
  // base URL is reported by name.
  service: serviceSchema.prefault({} as z.input<typeof serviceSchema>),
  objectStorage: objectStorageSchema.prefault({}),
  watchNamespaces: z
    .array(namespaceName)
    .default([])
    .describe("Namespaces whose objects are reconciled; empty: all."),
  shardKey: dnsLabel("")
    .optional()
    .describe(
      "Shard this operator serves: it reconciles only the objects labelled `aidc.io/shard=<key>` and elects its leader on its own Lease (`leaderElection.leaseName` + `-<key>`). Unset: the objects without that label (docs/install.md, Shards).",
    ),
  adoption: z
    .strictObject({
      namespaces: z
        .array(z.union([z.literal("*"), namespaceName]))
        .default([])
        .describe(
          'Namespaces whose objects may bind to remote resources the operator did not create for them: a hand-set `aidc.io/external-id`, a spec id (NasVolume `storageId`, BlockVolume `volumeId`, FileSystem `fileSystemId`), raw `storageId` mounts, every CciInstance, FileSystem mounts on a raw `instanceId`. `"*"`: all (one tenant only). Default none: a namespace uses only what its own objects created (docs/security.md).',
        ),
    })
    .prefault({}),
  connections: z
    .strictObject({
      secretNamespace: namespaceName
        .optional()
        .describe(
          "The one namespace whose Secrets the operator reads: the API keys and S3 credentials ServiceConnections name (a Role there, no cluster-wide Secret read). Default `POD_NAMESPACE`; unset and without it, no Secret is read and every ServiceConnection is `SecretUnreadable`.",
        ),
    })
    .prefault({}),
  catalog: z
    .strictObject({
      refreshIntervalMs: ms
        .default(600_000)
        .describe(
          "How often each connection's product catalogs (TrainingProduct, NasProduct objects) are read again from the service. A ServiceConnection or a product annotated `aidc.io/reconcile-requested-at`, and a TrainingJob or NasVolume refused for an unknown product code, refresh its connection's catalogs before then.",
        ),
    })
    .prefault({}),
  pollIntervalMs: perName(ms, 30_000).describe(
    "Poll interval of a kind's remote state while it may change: `{ default, <Kind>: ms }`, e.g. `TrainingJob: 10000`; a name no polled kind has stops the start, naming those there are.",
  ),
  resyncPeriodMs: z
    .number()
    .int()
    .min(0)
    .default(DEFAULT_RESYNC_PERIOD_MS)
    .describe(
      "Every object is reconciled again after about this long, even without a change; 0 disables.",
    ),
  resyncJitter: z
    .number()
    .min(0)
    .max(1)
    .default(DEFAULT_RESYNC_JITTER)
    .describe(
      "Fraction of the resync period added at random, so that objects do not resync together.",
    ),
  concurrency: perName(z.number().int().min(1).max(64), DEFAULT_CONCURRENCY).describe(
    "Workers per controller: `{ default, <controller>: n }`, a controller named by its kind in lower case (`nasvolume`), or `trainingjob-exposure` or `catalog`; a name no controller has stops the start, naming those there are. A worker is an async task, not a thread; 16 keeps objects whose service calls hang from starving the rest. Each connection's objects have that many of their own: a controller has room for four connections at full pace at once (more share its workers in turn), so another connection's backlog leaves an object as many workers as it has alone.",
  ),
  reconcileTimeoutMs: z
    .number()
    .int()
    .min(0)
    .default(DEFAULT_RECONCILE_TIMEOUT_MS)
    .describe(
      "Longest one reconcile may hold a worker: past it, it is abandoned (its service calls aborted, its later writes refused), Synced=False `ReconcileTimeout`, and the key retried with backoff (a routine poll or a follow-up look: first looked at again quietly, up to 3 times in a row). 0: no bound.",
    ),
  backoff: z
    .strictObject({
      baseMs: ms.default(DEFAULT_BACKOFF.baseMs),
      maxMs: ms.default(DEFAULT_BACKOFF.maxMs),
    })
    .refine(...longestAtLeastFirst("backoff", "baseMs", "maxMs"))
    .prefault({})
    .describe("Retry backoff of a failing key: per key, exponential from `baseMs` to `maxMs`."),
  holdBackoff: z
    .strictObject({
      baseMs: ms.default(DEFAULT_HOLD_BACKOFF.baseMs),
      maxMs: ms.default(DEFAULT_HOLD_BACKOFF.maxMs),
    })
    .refine(...longestAtLeastFirst("holdBackoff", "baseMs", "maxMs"))
    .prefault({})
    .describe(
      "Retry of an object held by a failure the service caused (API key refused, a missing operation, an answer of an unknown shape): per object, doubling from `baseMs` up to `maxMs`, besides the immediate retry when the API key changes. Failures of the object's own spec wait for a spec change.",
    ),
  trainingJob: z
    .strictObject({
      statusClasses: z
        .record(z.string().min(1), z.enum(["pending", "running", "succeeded", "failed", "stopped"]))
        .default({})
        .describe(
          "Remote task status words (any case) → `pending`, `running`, `succeeded`, `failed` or `stopped`, over the built-in table (docs/controllers.md, TrainingJob).",
        ),
      exposure: z
        .strictObject({
          enabled: z
            .boolean()
            .default(false)
            .describe(
              "Honour TrainingJob `spec.exposePorts`: a Service and an EndpointSlice per open port. Off, the operator needs no rule on Services or EndpointSlices, and a job that asks reads Synced=False `ExposureDisabled` (chart value `exposure.enabled`).",
            ),
          allowedCidrs: z
            .array(
              z
                .string()
                .regex(CIDR_SHAPE, { message: CIDR_EXPECTED, abort: true })
                .refine((c) => parseCidr(c) !== undefined, { message: CIDR_EXPECTED }),
            )
            .default([])
            .describe(
              "CIDR ranges an open port's external address (the service's `externalHost`) must lie in to become an EndpointSlice address; any other address (a pod or node IP, loopback, the metadata address, a hostname) gets `ExposureAddressRefused`. Default none: set the service's gateway range when enabling exposure.",
            ),
        })
        .prefault({}),
    })
    .prefault({}),
  kube: z
    .strictObject({
      // Events have a limiter of their own with the same figures (as client-go's
      // recorder), bounded further by their spam filter: one setting serves both.
      qps: z
        .number()
        .positive()
        .default(DEFAULT_KUBE_RATE_LIMIT.qps)
        .describe(
          "Requests per second to the API server of each connection's objects (above client-go's 20: see docs/performance.md); one connection's backlog does not spend another's.",
        ),
      burst: z
        .number()
        .int()
        .min(1)
        .default(DEFAULT_KUBE_RATE_LIMIT.burst)
        .describe("Burst of requests to the API server of each connection's objects."),
      totalQps: z
        .number()
        .positive()
        .default(DEFAULT_KUBE_TOTAL_RATE_LIMIT.qps)
        .describe(
          "Requests per second to the API server of all connections together, shared in turn while they wait.",
        ),
      totalBurst: z
        .number()
        .int()
        .min(1)
        .default(DEFAULT_KUBE_TOTAL_RATE_LIMIT.burst)
        .describe("Burst of requests to the API server of all connections together."),
      maxInFlight: z
        .number()
        .int()
        .min(1)
        .default(DEFAULT_KUBE_MAX_IN_FLIGHT)
        .describe(
          "Requests to the API server in flight at once (watches aside), per client (reconciles', Events'); a seat set free goes to the connection holding the fewest, so one connection's burst does not queue another's writes at the server.",
        ),
      watchdogMs: ms
        .default(DEFAULT_WATCHDOG_MS)
        .describe(
          "A watch silent this long (not even a bookmark) is ended; its connection is dropped when the next watch gets no answer within this time (10 s at most), else its kind is listed again (a warning when the list shows changes the watch never brought).",
        ),
    })
    .prefault({}),
  leaderElection: leaderElectionSchema.prefault({}),
  server: z
    .strictObject({
      port: port.default(DEFAULT_HEALTH_PORT),
      host: z.string().min(1).default("0.0.0.0"),
    })
    .prefault({})
    .describe("Port and address of `/metrics`, `/healthz` and `/readyz`."),
  ...lifecycleSettings,
  log: z
    .strictObject({
      level: z
        .enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"])
        .default("info")
        .describe("Log level of the JSON log lines."),
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
