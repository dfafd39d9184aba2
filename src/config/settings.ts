/**
 * The config settings that environment variables and flags can set (any setting can
 * be set in the file). One table, so the env names, the flags of `aidc-operator run`
 * and the docs cannot drift apart.
 */
import { editDistance } from "../runtime/edit-distance.js";

/** How a string from the environment or a flag becomes a config value. */
export type SettingType = "string" | "number" | "boolean" | "list";

/** One setting reachable from the environment and the command line. */
export interface Setting {
  /** Dotted path in the config, e.g. `service.baseUrl`. */
  path: string;
  /** Environment variable. */
  env: string;
  /** Long flag name without dashes, e.g. `service-base-url`. */
  flag: string;
  type: SettingType;
  description: string;
}

/** Settings with an environment variable and a flag. */
export const SETTINGS: readonly Setting[] = [
  {
    path: "service.baseUrl",
    env: "AIDC_SERVICE_BASE_URL",
    flag: "service-base-url",
    type: "string",
    description: "base URL of the Compute and Storage Service API",
  },
  {
    path: "service.allowInsecureHttp",
    env: "AIDC_SERVICE_ALLOW_INSECURE_HTTP",
    flag: "service-allow-insecure-http",
    type: "boolean",
    description:
      "allow a plain http:// base URL (sends the key unencrypted; emulator and playground only)",
  },
  {
    path: "service.apiKeyFile",
    env: "AIDC_API_KEY_FILE",
    flag: "api-key-file",
    type: "string",
    description: "file holding the service API key (the mounted Secret)",
  },
  {
    path: "service.listVisibilityWindowMs",
    env: "AIDC_SERVICE_LIST_VISIBILITY_WINDOW_MS",
    flag: "service-list-visibility-window-ms",
    type: "number",
    description:
      "how long the service may take to list a new task or NAS, ms; a create of unknown outcome is looked up this long after it can no longer take effect",
  },
  {
    path: "service.nasScaleSettleMs",
    env: "AIDC_SERVICE_NAS_SCALE_SETTLE_MS",
    flag: "service-nas-scale-settle-ms",
    type: "number",
    description:
      "how long an accepted NAS scale may take to show in the quota, ms; after it the NasVolume stops with ScaleOutcomeUnknown",
  },
  {
    path: "service.recreateLostCreates",
    env: "AIDC_SERVICE_RECREATE_LOST_CREATES",
    flag: "service-recreate-lost-creates",
    type: "boolean",
    description:
      "create again a create of unknown outcome that two complete listings after the visibility window do not show",
  },
  {
    path: "objectStorage.endpoint",
    env: "AIDC_OBJECT_STORAGE_ENDPOINT",
    flag: "object-storage-endpoint",
    type: "string",
    description: "S3 endpoint of the object storage (the Bucket kind)",
  },
  {
    path: "objectStorage.region",
    env: "AIDC_OBJECT_STORAGE_REGION",
    flag: "object-storage-region",
    type: "string",
    description: "region S3 requests are signed for (default us-east-1)",
  },
  {
    path: "objectStorage.allowInsecureHttp",
    env: "AIDC_OBJECT_STORAGE_ALLOW_INSECURE_HTTP",
    flag: "object-storage-allow-insecure-http",
    type: "boolean",
    description: "allow a plain http:// S3 endpoint (a local S3 server only)",
  },
  {
    path: "objectStorage.credentialsDir",
    env: "AIDC_OBJECT_STORAGE_CREDENTIALS_DIR",
    flag: "object-storage-credentials-dir",
    type: "string",
    description:
      "directory of the mounted S3 credentials Secret (files accessKeyId, secretAccessKey, sessionToken)",
  },
  {
    path: "watchNamespaces",
    env: "AIDC_WATCH_NAMESPACES",
    flag: "watch-namespaces",
    type: "list",
    description: "comma-separated namespaces to reconcile (default: all)",
  },
  {
    path: "shardKey",
    env: "AIDC_SHARD_KEY",
    flag: "shard-key",
    type: "string",
    description:
      "reconcile only the objects labelled aidc.io/shard=<key>, on a Lease of its own (default: the unlabelled objects)",
  },
  {
    path: "adoption.namespaces",
    env: "AIDC_ADOPTION_NAMESPACES",
    flag: "adoption-namespaces",
    type: "list",
    description:
      "comma-separated namespaces that may bind to remote resources they did not create (* all)",
  },
  {
    path: "trainingJob.exposure.enabled",
    env: "AIDC_EXPOSURE",
    flag: "exposure",
    type: "boolean",
    description: "honour spec.exposePorts with Services and EndpointSlices (env: true|false)",
  },
  {
    path: "trainingJob.exposure.allowedCidrs",
    env: "AIDC_EXPOSURE_ALLOWED_CIDRS",
    flag: "exposure-allowed-cidrs",
    type: "list",
    description:
      "comma-separated CIDR ranges an open port's external address must lie in to be exposed",
  },
  {
    path: "pollIntervalMs.default",
    env: "AIDC_POLL_INTERVAL_MS",
    flag: "poll-interval-ms",
    type: "number",
    description: "default poll interval of remote state, ms",
  },
  {
    path: "resyncPeriodMs",
    env: "AIDC_RESYNC_PERIOD_MS",
    flag: "resync-period-ms",
    type: "number",
    description: "period of full resyncs, ms (0: none)",
  },
  {
    path: "concurrency.default",
    env: "AIDC_CONCURRENCY",
    flag: "concurrency",
    type: "number",
    description: "workers per controller",
  },
  {
    path: "leaderElection.enabled",
    env: "AIDC_LEADER_ELECTION",
    flag: "leader-elect",
    type: "boolean",
    description: "elect a leader on a Lease (env: true|false)",
  },
  {
    path: "leaderElection.leaseName",
    env: "AIDC_LEASE_NAME",
    flag: "lease-name",
    type: "string",
    description: "name of the leader election Lease",
  },
  {
    path: "leaderElection.leaseNamespace",
    env: "AIDC_LEASE_NAMESPACE",
    flag: "lease-namespace",
    type: "string",
    description: "namespace of the Lease (default: POD_NAMESPACE)",
  },
  {
    path: "server.port",
    env: "AIDC_METRICS_PORT",
    flag: "metrics-port",
    type: "number",
    description: "port of /metrics, /healthz and /readyz",
  },
  {
    path: "log.level",
    env: "AIDC_LOG_LEVEL",
    flag: "log-level",
    type: "string",
    description: "trace|debug|info|warn|error|fatal|silent",
  },
];

/** Environment variable of the config file path (the `--config` flag wins). */
export const CONFIG_FILE_ENV = "AIDC_CONFIG";
/** Environment variable holding the API key itself (wins over `service.apiKeyFile`). */
export const API_KEY_ENV = "AIDC_API_KEY";
/**
 * Environment variables holding the S3 key pair, and the session token of temporary
 * ones (win over `objectStorage.credentialsDir`).
 */
export const S3_KEY_ENV = {
  accessKeyId: "AIDC_S3_ACCESS_KEY_ID",
  secretAccessKey: "AIDC_S3_SECRET_ACCESS_KEY",
  sessionToken: "AIDC_S3_SESSION_TOKEN",
} as const;

/** Every variable of the operator's own (`AIDC_*`): the settings' and those above. */
export const OPERATOR_ENV_NAMES: ReadonlySet<string> = new Set([
  ...SETTINGS.map((s) => s.env),
  CONFIG_FILE_ENV,
  API_KEY_ENV,
  ...Object.values(S3_KEY_ENV),
]);

/**
 * The variable of the operator's own that `name` misspells (two letters off at most,
 * e.g. `AIDC_WATCH_NAMESPACE`), else undefined: a misspelt variable would be ignored.
 */
export function misspeltEnvName(name: string): string | undefined {
  if (!name.startsWith("AIDC_") || OPERATOR_ENV_NAMES.has(name)) return undefined;
  let closest: { name: string; distance: number } | undefined;
  for (const known of OPERATOR_ENV_NAMES) {
    const distance = editDistance(name, known);
    if (distance <= 2 && (!closest || distance < closest.distance))
      closest = { name: known, distance };
  }
  return closest?.name;
}

/**
 * Converts a raw string to the setting's type; throws an Error whose message says what
 * was expected (the caller adds where the value came from).
 */
export function parseSettingValue(type: SettingType, raw: string | boolean): unknown {
  if (typeof raw === "boolean") {
    if (type !== "boolean") throw new Error("expected a value");
    return raw;
  }
  switch (type) {
    case "string":
      return raw;
    case "number": {
      const n = Number(raw.trim());
      if (raw.trim() === "" || !Number.isFinite(n))
        throw new Error(`expected a number, got ${JSON.stringify(raw)}`);
      return n;
    }
    case "boolean": {
      const v = raw.trim().toLowerCase();
      if (v === "true" || v === "1") return true;
      if (v === "false" || v === "0") return false;
      throw new Error(`expected true or false, got ${JSON.stringify(raw)}`);
    }
    case "list":
      return commaList(raw);
  }
}

/** The entries of a comma-separated list (`a, b,`), trimmed, empty ones dropped. */
export function commaList(raw: string): string[] {
  return raw
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}
