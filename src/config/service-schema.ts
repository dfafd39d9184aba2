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
  DEFAULT_RATE_LIMIT,
  DEFAULT_RECHECK_MISSING_MS,
  DEFAULT_RETRY_POLICY,
  DEFAULT_TIMEOUT_MS,
} from "../service/defaults.js";
import { DEFAULT_CREATE_TASK_FIELDS } from "../service/endpoints.js";

const ms = z.number().int().positive();

/** What a config without `service.baseUrl` is told. */
export const BASE_URL_REQUIRED =
  "required: the base URL of the Compute and Storage Service API (the chart's value service.baseUrl, or AIDC_SERVICE_BASE_URL)";

/** The service API client's settings. */
export const serviceSchema = z
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
    maxResponseBytes: z.number().int().min(1024).default(DEFAULT_MAX_RESPONSE_BYTES),
    /**
     * File holding the API key (the mounted Secret). Read again once every
     * `apiKeyRefreshMs`, so a rotated Secret takes effect without a restart. `AIDC_API_KEY` (environment) is the
     * alternative; the key itself never appears in the config file or logs.
     */
    apiKeyFile: z.string().min(1).optional(),
    /**
     * How often the key file is read again: a rotated key is used, and the objects held
     * by a refused key are retried, at most this long after the file changed.
     */
    apiKeyRefreshMs: ms.default(10_000),
    /** Timeout of one HTTP attempt. */
    timeoutMs: ms.default(DEFAULT_TIMEOUT_MS),
    /**
     * How long a pooled keep-alive connection to the service (and to the object
     * storage, through the Bucket kind's S3 client) may stay idle before the operator
     * closes it. Keep it below the service's (or its proxy's) keep-alive
     * timeout: a request written on a connection the server is closing fails with
     * ECONNRESET, and a create that fails so is never sent again, so its object waits
     * out `listVisibilityWindowMs` before the lookup concludes.
     */
    idleSocketTimeoutMs: ms.default(DEFAULT_IDLE_SOCKET_TIMEOUT_MS),
    /**
     * What speaks HTTP to the service: `node-http` (Node's own module) or `node-fetch`.
     * Both follow no redirect, cut a body off at `maxResponseBytes`, time out after
     * `timeoutMs` and share the idle-bounded keep-alive connections; node-fetch's web
     * objects cost about three times the CPU per request (docs/performance.md, fifth
     * version).
     */
    httpClient: z.enum(["node-http", "node-fetch"]).default("node-http"),
    /** Retries of idempotent calls. */
    retry: z
      .strictObject({
        maxAttempts: z.number().int().min(1).default(DEFAULT_RETRY_POLICY.maxAttempts),
        baseDelayMs: ms.default(DEFAULT_RETRY_POLICY.baseDelayMs),
        maxDelayMs: ms.default(DEFAULT_RETRY_POLICY.maxDelayMs),
      })
      .prefault({}),
    /** Client-side token bucket; `null` disables it. */
    rateLimit: z
      .strictObject({
        ratePerSecond: z.number().positive().default(DEFAULT_RATE_LIMIT.ratePerSecond),
        burst: z.number().int().min(1).default(DEFAULT_RATE_LIMIT.burst),
      })
      .nullable()
      .prefault({}),
    /** How long a product catalog answer is reused (preflights); 0 reads it every time. */
    catalogTtlMs: z.number().int().min(0).default(DEFAULT_CATALOG_TTL_MS),
    /**
     * How long the verdict "the service does not answer this operation" (a bare 404)
     * stands before the operation is probed again, so a path that comes back is noticed.
     */
    operationRecheckMs: ms.default(DEFAULT_RECHECK_MISSING_MS),
    /**
     * Wire names of the task create's fields the spec's field list lacks: the source of
     * a COPY (`sourceTaskId`) and of a TEMPLATE create (`templateId`).
     */
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
      .prefault({}),
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
      .prefault({}),
    /**
     * How long after a create the service may take to show the new task, NAS or
     * template in its list operations (e.g. only once the order completed). A create
     * whose outcome is unknown (a 5xx, a timeout, a lost answer) is looked up by its
     * client token this long and never sent again by itself; after it the object stops
     * with CreateOutcomeUnknown for the user to decide. A resource absent from complete
     * listings counts as deleted outside the cluster only after it.
     */
    listVisibilityWindowMs: ms.default(DEFAULT_LIST_VISIBILITY_WINDOW_MS),
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
