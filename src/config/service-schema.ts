/**
 * The `service` section of the operator config (schema.ts): the service API client's
 * settings. Its defaults are the client's own (src/service/defaults.ts).
 */
import { z } from "zod";
import {
  DEFAULT_CATALOG_TTL_MS,
  DEFAULT_IDLE_SOCKET_TIMEOUT_MS,
  DEFAULT_LIST_VISIBILITY_WINDOW_MS,
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_NAS_SCALE_SETTLE_MS,
  DEFAULT_RATE_LIMIT,
  DEFAULT_RECHECK_MISSING_MS,
  DEFAULT_RETRY_POLICY,
  DEFAULT_TIMEOUT_MS,
} from "../service/defaults.js";
import {
  DEFAULT_CREATE_TASK_FIELDS,
  ENDPOINT_NAMES,
  ENDPOINT_OVERRIDE_PATTERN,
} from "../service/endpoints.js";

const ms = z.number().int().positive();

/** One endpoint's override: a path, or a method and a path; `null` disables it. */
const endpointOverride = z
  .string()
  .regex(ENDPOINT_OVERRIDE_PATTERN, 'expected "/path" or "METHOD /path" (GET, POST, PUT or DELETE)')
  .nullable();

/** What a config without `service.baseUrl` is told. */
export const BASE_URL_REQUIRED =
  "required: the base URL of the Compute and Storage Service API (the chart's value service.baseUrl, or AIDC_SERVICE_BASE_URL)";

/** Whether `url` has a user or password in it (`user:password@host`); false for no URL. */
export function urlCarriesCredentials(url: string | undefined): boolean {
  if (!url) return false;
  try {
    const u = new URL(url);
    return u.username !== "" || u.password !== "";
  } catch {
    return false;
  }
}

/**
 * The refinement of a delay pair that doubles from its first delay up to its longest
 * (`holdBackoff`, `service.retry`): a longest below the first would never double.
 */
export function longestAtLeastFirst<K extends string>(
  section: string,
  first: K,
  longest: K,
): [(delays: Record<K, number>) => boolean, { message: string; path: PropertyKey[] }] {
  return [
    (delays) => delays[longest] >= delays[first],
    { message: `must be at least ${section}.${first}`, path: [longest] },
  ];
}

/**
 * The service API client's settings. Each field's `.describe()` text is its entry in
 * docs/configuration.md (scripts/generate-config-docs.ts).
 */
export const serviceSchema = z
  .strictObject({
    baseUrl: z
      .url({
        protocol: /^https?$/,
        error: (issue) => (issue.input === undefined ? BASE_URL_REQUIRED : undefined),
      })
      .describe(
        "`{base_url}` of the service. Required, with no default: an operator installed without it stops at start naming the field instead of calling a wrong address. `aidc-operator dev` and the tests set it to their emulator.",
      ),
    allowInsecureHttp: z
      .boolean()
      .default(false)
      .describe(
        "Allow a plain `http://` base URL, which sends the API key unencrypted: for a local emulator, the playground and tests only. Without it an http URL stops the start.",
      ),
    maxResponseBytes: z
      .number()
      .int()
      .min(1024)
      .default(DEFAULT_MAX_RESPONSE_BYTES)
      .describe(
        "Longest response body read, in bytes: a longer answer is cut off and reported as `MalformedServiceAnswer`, so a broken or hostile service cannot exhaust the memory.",
      ),
    apiKeyFile: z
      .string()
      .min(1)
      .optional()
      .describe(
        "File holding the API key (the mounted Secret), read again every `apiKeyRefreshMs`, so a rotated Secret takes effect without a restart. `AIDC_API_KEY` (the key itself, environment only) wins. One of them is required; the key never appears in the config or the logs.",
      ),
    apiKeyRefreshMs: ms
      .default(10_000)
      .describe(
        "How often the key file is read again: a new key is used, and the objects a refused key held are retried, at most this long after the file changed.",
      ),
    timeoutMs: ms
      .default(DEFAULT_TIMEOUT_MS)
      .describe(
        "Timeout of one HTTP attempt. The service is assumed to act on a create within it: a create whose answer was lost is looked up until this long after its call ended, and then for `listVisibilityWindowMs`, before the list may prove it absent.",
      ),
    idleSocketTimeoutMs: ms
      .default(DEFAULT_IDLE_SOCKET_TIMEOUT_MS)
      .describe(
        "How long a pooled keep-alive connection to the service (and to the object storage) may stay idle before the operator closes it. Keep it below the service's (or its proxy's) keep-alive timeout: a request written on a connection the server is closing fails with ECONNRESET, and a create that fails so is not sent again, so its object waits out `listVisibilityWindowMs`. A create (any POST) takes only a connection idle under 1 s, else a new one, so a front closing idle connections sooner than this (nginx `keepalive_timeout 2s`) costs its creates nothing.",
      ),
    httpClient: z
      .enum(["node-http", "node-fetch"])
      .default("node-http")
      .describe(
        "What speaks HTTP to the service: `node-http` (Node's own module) or `node-fetch`. Both follow no redirect, cut a body off at `maxResponseBytes`, time out after `timeoutMs` and share the idle-bounded keep-alive connections; node-fetch costs more CPU (docs/performance.md measures it).",
      ),
    retry: z
      .strictObject({
        maxAttempts: z.number().int().min(1).default(DEFAULT_RETRY_POLICY.maxAttempts),
        baseDelayMs: ms.default(DEFAULT_RETRY_POLICY.baseDelayMs),
        maxDelayMs: ms.default(DEFAULT_RETRY_POLICY.maxDelayMs),
      })
      .refine(...longestAtLeastFirst("service.retry", "baseDelayMs", "maxDelayMs"))
      .prefault({})
      .describe("Retries of idempotent calls: attempts, first and longest delay."),
    rateLimit: z
      .strictObject({
        ratePerSecond: z.number().positive().default(DEFAULT_RATE_LIMIT.ratePerSecond),
        burst: z.number().int().min(1).default(DEFAULT_RATE_LIMIT.burst),
      })
      .nullable()
      .prefault({})
      .describe(
        "Client-side token bucket of the calls to the service (routine polls wait behind other calls); `null` disables it. A ServiceConnection's `spec.limits` replaces it for its objects.",
      ),
    routineCallShare: z
      .number()
      .gt(0)
      .max(1)
      .default(0.2)
      .describe(
        "Share of each connection's rate limit that routine observation (polls of settled objects, list walks) may use; their intervals stretch to fit the fleet, and creates and requested reconciles go first. `aidc_service_routine_budget_wait_seconds_total` counts the time observation ran slower than configured.",
      ),
    catalogTtlMs: z
      .number()
      .int()
      .min(0)
      .default(DEFAULT_CATALOG_TTL_MS)
      .describe(
        "How long the preflights reuse a product catalog answer, and a NAS availability answer per compute center and product; 0 reads them every time.",
      ),
    operationRecheckMs: ms
      .default(DEFAULT_RECHECK_MISSING_MS)
      .describe(
        'How long the verdict "the service does not answer this operation" (a bare 404) stands before the operation is probed again, so a path that comes back is noticed.',
      ),
    createTaskFields: z
      .strictObject({
        sourceTaskId: z
          .string()
          .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
          .default(DEFAULT_CREATE_TASK_FIELDS.sourceTaskId),
        templateId: z
          .string()
          .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
          .default(DEFAULT_CREATE_TASK_FIELDS.templateId),
      })
      .prefault({})
      .describe(
        "Wire names of the task create's fields that the service's field list lacks: the source of a COPY and of a TEMPLATE create (docs/service-assumptions.md).",
      ),
    subscriptionResult: z
      .strictObject({
        keyField: z.string().min(1).optional(),
        stateField: z.string().min(1).optional(),
        instanceIdField: z.string().min(1).optional(),
        messageField: z.string().min(1).optional(),
        states: z.record(z.string().min(1), z.enum(["Pending", "Succeeded", "Failed"])).default({}),
      })
      .prefault({})
      .describe(
        'How the service\'s create answers and subscription results read, where they differ from the shapes the client recognises (docs/service-assumptions.md): the field of a create\'s answer holding its subscription key, the fields of a result holding the state, the created id and the message, and state values (words or numbers as text, any case) mapped to `Pending`, `Succeeded` or `Failed`, e.g. `{"1": "Pending", "2": "Succeeded", "3": "Failed"}`.',
      ),
    listVisibilityWindowMs: ms
      .default(DEFAULT_LIST_VISIBILITY_WINDOW_MS)
      .describe(
        "How long after a create the service may take to list the new task, NAS or template (e.g. until its order completes). A create whose outcome is unknown (5xx, timeout, lost answer) is looked up by its client token this long after it can no longer take effect (`timeoutMs` after its call ended; where the process that sent it stopped, `reconcileTimeoutMs` + `timeoutMs` after its marker, as the marker records them); then it is created again where the list proves it absent (`recreateLostCreates`), else the object stops with `CreateOutcomeUnknown`. A bound resource absent from two complete listings counts as deleted outside the cluster only after it, and one the operator ordered that its detail read or delete calls unknown (404) before it was ever read is waited for (Ready `Creating`) until it. Set it beyond the service's longest order time.",
      ),
    recreateLostCreates: z
      .boolean()
      .default(true)
      .describe(
        "After `listVisibilityWindowMs` (counted from when the create can no longer take effect), create again (once, with a new client token and a Warning event) a create of unknown outcome whose resource is absent from two complete listings in a row whose records all carry the field the token travels in (the description of a NAS, volume or file system, a task's env; a TrainingTemplate: no record listed has its name). `false` for a service whose orders can appear later than any window: such a create then stops with `CreateOutcomeUnknown`, as does one a stopped process sent with `reconcileTimeoutMs` 0 (no bound on when it went out).",
      ),
    nasScaleSettleMs: ms
      .default(DEFAULT_NAS_SCALE_SETTLE_MS)
      .describe(
        "How long a NAS capacity change the service accepted may take to show in the NAS's quota. Until then the NasVolume is Synced `Updating` and nothing more is sent; after it, it stops with `ScaleOutcomeUnknown` (a second request could scale twice) until the quota shows the change or the user removes the `aidc.io/nas-scale` annotation. Set it beyond the service's longest scale time.",
      ),
    endpoints: z
      .partialRecord(z.enum(ENDPOINT_NAMES), endpointOverride)
      .default({})
      .describe(
        'Endpoint table overrides by operation name: `"/path"` or `"METHOD /path"` enables or moves one, `null` disables it (docs/service-endpoints.md).',
      ),
  })
  .superRefine((s, ctx) => {
    if (urlCarriesCredentials(s.baseUrl)) {
      ctx.addIssue({
        code: "custom",
        path: ["baseUrl"],
        message:
          "must not carry a user or password (user:password@host): logs and messages show this URL; the API key goes in service.apiKeyFile (or AIDC_API_KEY)",
      });
    } else if (s.baseUrl.startsWith("http://") && !s.allowInsecureHttp) {
      ctx.addIssue({
        code: "custom",
        path: ["baseUrl"],
        message: `${s.baseUrl} is plain http, which would send the API key unencrypted: use an https:// URL, or set service.allowInsecureHttp: true (a local emulator or playground only)`,
      });
    }
  });
