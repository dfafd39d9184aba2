/**
 * The shared core of the service client: options and their defaults, the transport,
 * the endpoint table, and request validation. The operations live in files by concern
 * (training-operations.ts, storage-operations.ts, client.ts), chained by inheritance
 * only so that `ServiceClient` is one flat object with one method per operation.
 */
import type { Logger } from "pino";
import { z } from "zod";
import type { RetryPolicy } from "./backoff.js";
import {
  DEFAULT_CATALOG_TTL_MS,
  DEFAULT_IDLE_SOCKET_TIMEOUT_MS,
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_RATE_LIMIT,
  DEFAULT_RETRY_POLICY,
  DEFAULT_TIMEOUT_MS,
} from "./defaults.js";
import {
  type CreateTaskFieldNames,
  DEFAULT_CREATE_TASK_FIELDS,
  type EndpointDefinition,
  type EndpointName,
  type EndpointOverrides,
  isEndpointName,
  resolveEndpointTable,
} from "./endpoints.js";
import {
  EndpointDisabledError,
  endpointConfigKey,
  ServiceInvalidRequestError,
  ServiceOperationMissingError,
} from "./errors.js";
import { SERVICE_ID_PATTERN, SERVICE_ID_RULE } from "./ids.js";
import {
  ASSUMED_OPERATIONS,
  OperationAvailability,
  type OperationVerdict,
  verdictOfError,
} from "./operation-availability.js";
import type { OperationArgs, OperationCaller, OperationState } from "./operation-caller.js";
import type { CallPriority, RateLimit, Sleep } from "./rate-limiter.js";
import { describeIssues } from "./schemas/primitives.js";
import type { SubscriptionResultMapping } from "./schemas/subscription.js";
import {
  type CallArgs,
  type RequestObservation,
  type ServiceHttpClient,
  ServiceTransport,
} from "./transport.js";

/** How a `ServiceClient` reaches and treats the service. */
export interface ServiceClientOptions {
  /** Base URL the endpoint paths are appended to, e.g. `https://api.example.com`. */
  baseUrl: string;
  /** Reads the API key for each request, so a rotated Secret takes effect at once. */
  apiKey: () => string | Promise<string>;
  /** Timeout per attempt, in ms. Default 10 000. */
  timeoutMs?: number;
  /**
   * Longest response body read, in bytes: a longer one is cut off, its stream destroyed,
   * and the call fails as a malformed answer. Default 4 MiB.
   */
  maxResponseBytes?: number;
  /**
   * A pooled keep-alive socket idle this long is closed, below the service's keep-alive
   * timeout. Default 4 000 (`DEFAULT_IDLE_SOCKET_TIMEOUT_MS`).
   */
  idleSocketTimeoutMs?: number;
  /** What speaks HTTP to the service: `node-http` (default) or `node-fetch`. */
  httpClient?: ServiceHttpClient;
  /** Retries of idempotent calls. Default 4 attempts, 200 ms doubling, at most 5 s. */
  retry?: RetryPolicy;
  /** Client-side token bucket; null turns it off. Default 50/s with a burst of 100. */
  rateLimit?: RateLimit | null;
  /**
   * A call that would wait longer than this for the rate limit fails at once with
   * `ServiceThrottledError` (not sent), freeing its reconcile's worker; undefined
   * (default): every call waits its turn. Service connections set it, so one account's
   * saturated limit cannot hold the workers every account shares.
   */
  rateLimitMaxWaitMs?: number;
  /**
   * The priority of the call being made, read at the rate limit: `low` calls (routine
   * polls) wait while `normal` ones wait too. The operator passes the priority of the
   * reconcile making the call. Default: every call `normal`.
   */
  callPriority?: () => CallPriority;
  /**
   * The abort signal of the call being made, read when it starts: an aborted signal
   * (a reconcile abandoned at its deadline) stops the call's attempts and backoffs at
   * once. The operator passes the signal of the reconcile making the call.
   */
  callSignal?: () => AbortSignal | undefined;
  /** Endpoint overrides by name: `"/path"` or `"METHOD /path"` enables, null disables. */
  endpoints?: EndpointOverrides;
  /** Debug log per attempt (endpoint, path, status, duration); never headers or the key. */
  logger?: Logger;
  /** Called after every attempt, for metrics. */
  onRequest?: (e: RequestObservation) => void;
  /** Jitter source (tests). */
  random?: () => number;
  /** How waits happen (tests). */
  sleep?: Sleep;
  /**
   * How long a product catalog answer (training and NAS product lists, and NAS
   * availability per compute center and product) is reused, in ms; concurrent asks
   * share one request. Default 30 000; 0 reads it every time.
   */
  catalogTtlMs?: number;
  /** Clock of the catalog cache (tests). Default Date.now. */
  now?: () => number;
  /** How long a "missing" operation verdict stands before it is probed again. Default 10 000. */
  recheckMissingMs?: number;
  /** How subscription results read where they differ from the built-in shapes. */
  subscriptionResult?: SubscriptionResultMapping;
  /** Wire names of the task create's assumed fields (`sourceTaskId`, `templateId`). */
  createTaskFields?: Partial<CreateTaskFieldNames>;
}

/** The value of every path parameter of a probe: an id no resource has. */
export const PROBE_ID = "aidc-operator-probe";

/** Data of operations that answer an empty object: ignored. */
export const emptyData = z.unknown().transform((): void => undefined);

/** Data of the asynchronous creates: the subscription result key. */
export const subscriptionKeySchema = z.preprocess(
  (v) => (typeof v === "number" ? String(v) : v),
  z.string().regex(SERVICE_ID_PATTERN, `expected the subscription result key (${SERVICE_ID_RULE})`),
);

/** An array of `item`; null reads as empty. */
export function listOf<T extends z.ZodType>(item: T) {
  return z.preprocess((v) => (v === null ? [] : v), z.array(item));
}

/** The state every operation group shares. */
export class ServiceClientCore implements OperationCaller {
  private readonly transport: ServiceTransport;
  private readonly endpoints: Record<EndpointName, EndpointDefinition | null>;
  private readonly catalogTtlMs: number;
  /** The clock of the caches (ms since the epoch). */
  protected readonly now: () => number;
  private readonly catalog = new Map<string, { at: number; answer: Promise<unknown> }>();
  private readonly probes = new Map<EndpointName, Promise<OperationVerdict>>();
  /** What this connection knows about which operations the service answers. */
  readonly operations: OperationAvailability;
  /**
   * Identifies this client's account: a cache kept outside the client for the answers
   * of one account (e.g. a shared list walk) keys on it, so that a client routed per
   * object (src/controllers/connections) never serves one account's answers to another.
   */
  readonly accountScope: object = {};
  /** How subscription results read (`ServiceClientOptions.subscriptionResult`). */
  protected readonly subscriptionMapping: SubscriptionResultMapping;
  /** Wire names of the task create's assumed fields. */
  protected readonly createTaskFields: CreateTaskFieldNames;

  /** Throws an Error when the endpoint overrides are invalid (unknown name, bad path). */
  constructor(options: ServiceClientOptions) {
    this.endpoints = resolveEndpointTable(options.endpoints);
    this.catalogTtlMs = options.catalogTtlMs ?? DEFAULT_CATALOG_TTL_MS;
    this.now = options.now ?? Date.now;
    this.operations = new OperationAvailability(options.recheckMissingMs, this.now);
    this.subscriptionMapping = options.subscriptionResult ?? {};
    this.createTaskFields = { ...DEFAULT_CREATE_TASK_FIELDS, ...options.createTaskFields };
    this.transport = new ServiceTransport({
      availability: this.operations,
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      maxResponseBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
      idleSocketTimeoutMs: options.idleSocketTimeoutMs ?? DEFAULT_IDLE_SOCKET_TIMEOUT_MS,
      ...(options.httpClient ? { httpClient: options.httpClient } : {}),
      retry: options.retry ?? DEFAULT_RETRY_POLICY,
      rateLimit: options.rateLimit === undefined ? DEFAULT_RATE_LIMIT : options.rateLimit,
      rateLimitMaxWaitMs: options.rateLimitMaxWaitMs,
      priority: options.callPriority,
      signal: options.callSignal,
      endpoints: this.endpoints,
      logger: options.logger,
      onRequest: options.onRequest,
      ...(options.random ? { random: options.random } : {}),
      ...(options.sleep ? { sleep: options.sleep } : {}),
    });
  }

  /**
   * A catalog read through the TTL cache: an answer younger than `catalogTtlMs` is
   * reused, one in flight is shared, and a failed one is forgotten at once.
   */
  protected cachedCatalog<T>(key: string, read: () => Promise<T>): Promise<T> {
    if (this.catalogTtlMs <= 0) return read();
    const now = this.now();
    const hit = this.catalog.get(key);
    if (hit && now - hit.at < this.catalogTtlMs) return hit.answer as Promise<T>;
    const answer = read();
    this.catalog.set(key, { at: now, answer });
    answer.catch(() => {
      if (this.catalog.get(key)?.answer === answer) this.catalog.delete(key);
    });
    return answer;
  }

  /** Whether operation `name` is enabled; a disabled one throws `EndpointDisabledError`. */
  isEndpointEnabled(name: EndpointName): boolean {
    return this.transport.isEnabled(name);
  }

  /** The effective definition of `name`, or null when disabled. */
  endpoint(name: EndpointName): EndpointDefinition | null {
    return this.endpoints[name];
  }

  /**
   * Asks the service whether it answers operation `name`, with a request for an id no
   * resource has (`PROBE_ID`; a POST carries `{}`): an envelope, even an error one,
   * means present; a bare HTTP 404/405 means missing. The verdict is cached in
   * {@link operations}; concurrent asks share one request. Throws the call's error
   * when the answer teaches nothing (no answer, a refused key, a bare 5xx), and
   * `EndpointDisabledError` for a disabled operation.
   */
  async probeOperation(name: EndpointName): Promise<OperationVerdict> {
    const def = this.endpoints[name];
    if (!def) throw new EndpointDisabledError(name);
    const running = this.probes.get(name);
    if (running) return running;
    const params: Record<string, string> = {};
    for (const m of def.path.matchAll(/\{(\w+)\}/g)) params[m[1] as string] = PROBE_ID;
    const probe = this.transport
      .call(name, { params, ...(def.method === "GET" ? {} : { body: {} }) }, z.unknown())
      .then(
        (): OperationVerdict => "present",
        (err: unknown): OperationVerdict => {
          const verdict = verdictOfError(err);
          if (!verdict) throw err;
          return verdict;
        },
      )
      .finally(() => this.probes.delete(name));
    this.probes.set(name, probe);
    return probe;
  }

  /**
   * Resolves when every operation of `names` is enabled and answered by the service
   * (probed when nothing is known yet, or when a "missing" verdict is old). Throws
   * `EndpointDisabledError` for a disabled one, `ServiceOperationMissingError` naming
   * the first missing one and its config key, or the probe's error when it cannot tell.
   * Throws `ServiceThrottledError` when the client's rate limit is saturated beyond
   * `rateLimitMaxWaitMs`: an order about to start would be bounced at its first call,
   * after the caller's bookkeeping (a create-pending write), so it is bounced here.
   */
  async requireOperations(names: readonly string[], purpose: string): Promise<void> {
    for (const name of names) endpointNamed(name);
    this.transport.refuseLongWait((names[0] as EndpointName | undefined) ?? "requireOperations");
    for (const name of names as readonly EndpointName[]) {
      if (!this.endpoints[name]) throw new EndpointDisabledError(name);
      const verdict = this.operations.needsProbe(name)
        ? await this.probeOperation(name)
        : this.operations.verdict(name);
      if (verdict === "missing") {
        const def = this.endpoints[name];
        throw new ServiceOperationMissingError(
          `the service does not answer the operation ${name} (${def?.method} ${def?.path}: HTTP 404 without a service envelope), which ${purpose} needs; nothing is ordered. Confirm the path with the service and set it with ${endpointConfigKey(name)} in the operator configuration`,
          { endpoint: name, code: 404 },
        );
      }
    }
  }

  /**
   * Probes every enabled read (GET) operation whose path is an assumption (once per
   * connection; for the start-up log and metrics). Assumed operations that change
   * something (open-port, deletes) are never probed: their first real call teaches
   * their verdict. An operation the probe cannot decide is "unknown" and probed again
   * before it is needed.
   */
  async probeAssumedOperations(): Promise<Partial<Record<EndpointName, OperationVerdict>>> {
    const out: Partial<Record<EndpointName, OperationVerdict>> = {};
    const reads = ASSUMED_OPERATIONS.filter((n) => this.endpoints[n]?.method === "GET");
    await Promise.all(
      reads.map(async (name) => {
        out[name] = await this.probeOperation(name).catch((): OperationVerdict => "unknown");
      }),
    );
    return out;
  }

  /** Closes idle keep-alive connections; the client stays usable. */
  close(): void {
    this.transport.close();
  }

  /** Calls endpoint `name`; see `ServiceTransport.call` for errors and retries. */
  protected call<T>(name: EndpointName, args: CallArgs, schema: z.ZodType<T>): Promise<T> {
    return this.transport.call(name, args, schema);
  }

  /**
   * Calls operation `name` of the endpoint table: how a kind's own operations
   * (src/service/kinds/<kind>.ts) reach the service. Throws an Error for a name the
   * table does not have, else as {@link call}.
   */
  request<T>(name: string, args: OperationArgs, schema: z.ZodType<T>): Promise<T> {
    return this.call(endpointNamed(name), args, schema);
  }

  /** What is known of operation `name`, without a request (OperationCaller). */
  operationState(name: string): OperationState {
    const op = endpointNamed(name);
    if (!this.endpoints[op]) return "disabled";
    const verdict = this.operations.verdict(op);
    if (verdict === "missing" && this.operations.needsProbe(op)) return "unknown";
    return verdict;
  }

  /** {@link validBody} for a kind's own operations (src/service/kinds/<kind>.ts). */
  checkedBody(name: string, schema: z.ZodType, body: unknown): unknown {
    return this.validBody(endpointNamed(name), schema, body);
  }

  /**
   * Returns `body` when `schema` accepts it; otherwise throws
   * `ServiceInvalidRequestError` naming the failing fields, and nothing is sent.
   */
  protected validBody<T extends z.ZodType>(
    endpoint: EndpointName,
    schema: T,
    body: unknown,
  ): unknown {
    const parsed = schema.safeParse(body);
    if (!parsed.success) {
      throw new ServiceInvalidRequestError(
        `invalid ${endpoint} request: ${describeIssues(parsed.error, "request")}`,
        { endpoint },
      );
    }
    return body;
  }
}

/** `name` as an operation of the endpoint table; throws an Error for any other string. */
function endpointNamed(name: string): EndpointName {
  if (!isEndpointName(name))
    throw new Error(`no service operation "${name}" in the endpoint table`);
  return name;
}
