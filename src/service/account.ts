/**
 * One account of the service as every view of its client shares it (client.ts,
 * `ServiceClient.withCall`): the transport (its rate limit), the endpoint table, what
 * is known of each operation (operation-availability.ts), and what the account
 * remembers of the service's answers:
 *
 * - the product catalogs: an answer younger than the TTL is reused, one in flight is
 *   shared, and a failed one is forgotten at once, so that a burst of creates of one
 *   product asks the catalog once;
 * - the list snapshots, by list operation (kind-list.ts), so that one walk per asked
 *   age serves every object of the kind whatever reconcile reads it.
 */
import type { z } from "zod";
import type { CallContext } from "./call-context.js";
import type { ServiceClientOptions } from "./client-options.js";
import {
  DEFAULT_CATALOG_TTL_MS,
  DEFAULT_IDLE_SOCKET_TIMEOUT_MS,
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_RATE_LIMIT,
  DEFAULT_RETRY_POLICY,
  DEFAULT_TIMEOUT_MS,
} from "./defaults.js";
import { type EndpointDefinition, type EndpointName, resolveEndpointTable } from "./endpoints.js";
import {
  ServiceInvalidRequestError,
  ServiceMalformedResponseError,
  ServiceResultShapeError,
} from "./errors.js";
import { ListSnapshot } from "./list-snapshot.js";
import { endpointNamed, OperationAvailability, OperationProbes } from "./operation-availability.js";
import type {
  CatalogReads,
  KindListState,
  KindListStore,
  OperationArgs,
  OperationCaller,
  OperationsContext,
} from "./operation-caller.js";
import { type Page, pageOf } from "./schemas/data.js";
import { describeIssues } from "./schemas/primitives.js";
import { type SubscriptionResult, subscriptionResultSchema } from "./schemas/subscription.js";
import { priorityOf, ServiceTransport } from "./transport.js";

/**
 * What every view of one account's client shares (see the module comment). A kind's
 * controller may key what it remembers of the account's answers on it.
 */
export class ServiceAccount {
  readonly transport: ServiceTransport;
  readonly endpoints: Record<EndpointName, EndpointDefinition | null>;
  /** Which operations the service answers, and asking it. */
  readonly probes: OperationProbes;
  readonly catalog: CatalogCache;
  readonly lists: KindListStates;
  readonly now: () => number;

  /** Throws an Error when the endpoint overrides are invalid (unknown name, bad path). */
  constructor(readonly options: ServiceClientOptions) {
    this.now = options.now ?? Date.now;
    this.endpoints = resolveEndpointTable(options.endpoints);
    const operations = new OperationAvailability(options.recheckMissingMs, this.now);
    this.transport = new ServiceTransport({
      availability: operations,
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      maxResponseBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
      idleSocketTimeoutMs: options.idleSocketTimeoutMs ?? DEFAULT_IDLE_SOCKET_TIMEOUT_MS,
      ...(options.httpClient ? { httpClient: options.httpClient } : {}),
      retry: options.retry ?? DEFAULT_RETRY_POLICY,
      rateLimit: options.rateLimit === undefined ? DEFAULT_RATE_LIMIT : options.rateLimit,
      rateLimitMaxWaitMs: options.rateLimitMaxWaitMs,
      routineShare: options.routineShare,
      endpoints: this.endpoints,
      logger: options.logger,
      onRequest: options.onRequest,
      ...(options.random ? { random: options.random } : {}),
      ...(options.sleep ? { sleep: options.sleep } : {}),
    });
    this.probes = new OperationProbes(this.endpoints, operations, this.transport);
    this.catalog = new CatalogCache(options.catalogTtlMs ?? DEFAULT_CATALOG_TTL_MS, this.now);
    this.lists = new KindListStates(this.now);
  }

  /**
   * Calls operation `name` of the endpoint table under `context`: how the kinds'
   * operations (src/service/kinds/<kind>.ts) reach the service. Throws an Error for a
   * name the table does not have, else as `ServiceTransport.call` (errors and retries).
   */
  request<T>(
    name: string,
    args: OperationArgs,
    schema: z.ZodType<T>,
    context: CallContext,
  ): Promise<T> {
    return this.transport.call(endpointNamed(name), args, schema, context);
  }

  /**
   * Returns `body` when `schema` accepts it; otherwise throws
   * `ServiceInvalidRequestError` naming the failing fields, and nothing is sent.
   */
  checkedBody(name: string, schema: z.ZodType, body: unknown): unknown {
    const endpoint = endpointNamed(name);
    const parsed = schema.safeParse(body);
    if (!parsed.success) {
      throw new ServiceInvalidRequestError(
        `invalid ${endpoint} request: ${describeIssues(parsed.error, "request")}`,
        { endpoint },
      );
    }
    return body;
  }

  /**
   * `OperationProbes.requireOperations` under `context`, after the rate limit: throws
   * `ServiceThrottledError` when it is saturated beyond `rateLimitMaxWaitMs`, since an
   * order about to start would be bounced at its first call, after the caller's
   * bookkeeping (a create-pending write).
   */
  async requireOperations(
    names: readonly string[],
    purpose: string,
    context: CallContext,
  ): Promise<void> {
    this.transport.refuseLongWait(names[0] ?? "requireOperations", priorityOf(context));
    return this.probes.requireOperations(names, purpose, context);
  }

  /**
   * What a view's kind operations modules (src/service/kinds/) keep and call through:
   * `caller`, the view with its call context, and what the account shares.
   */
  operationsContext(caller: OperationCaller): OperationsContext {
    const mapping = this.options.subscriptionResult ?? {};
    return {
      caller,
      now: this.now,
      catalog: this.catalog,
      lists: this.lists,
      knownMissing: (name) => this.probes.knownMissing(name),
      subscriptionResult: (name, key) => readSubscriptionResult(caller, name, key, mapping),
    };
  }
}

/**
 * The result of subscription `key` through operation `name`, read with the configured
 * `mapping` of its shape; an envelope whose data cannot be read is a
 * `ServiceResultShapeError` naming the config key to set.
 */
async function readSubscriptionResult(
  caller: OperationCaller,
  name: "getTrainingSubscriptionResult" | "getNasSubscriptionResult",
  key: string,
  mapping: NonNullable<ServiceClientOptions["subscriptionResult"]>,
): Promise<SubscriptionResult> {
  try {
    return await caller.request(name, { params: { key } }, subscriptionResultSchema(key, mapping));
  } catch (err) {
    if (err instanceof ServiceMalformedResponseError && err.enveloped) {
      throw new ServiceResultShapeError(err.message, {
        endpoint: name,
        code: err.code,
        enveloped: true,
        cause: err,
      });
    }
    throw err;
  }
}

/** The product catalogs' cache of one account; see the module comment. */
export class CatalogCache implements CatalogReads {
  private readonly answers = new Map<string, { at: number; answer: Promise<unknown> }>();

  /** `ttlMs` 0 or less reads every time; `now` is the clock (ms since the epoch). */
  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  /** The answer of `key`, from the cache or from `read()`. */
  read<T>(key: string, read: () => Promise<T>): Promise<T> {
    if (this.ttlMs <= 0) return read();
    const now = this.now();
    const hit = this.answers.get(key);
    if (hit && now - hit.at < this.ttlMs) return hit.answer as Promise<T>;
    const answer = read();
    this.answers.set(key, { at: now, answer });
    answer.catch(() => {
      if (this.answers.get(key)?.answer === answer) this.answers.delete(key);
    });
    return answer;
  }

  /** Drops every answer, so that the next read of each key asks the service. */
  forget(): void {
    this.answers.clear();
  }
}

/** The list states of one account, by list operation: its snapshots and page schemas. */
export class KindListStates implements KindListStore {
  private readonly states = new Map<string, KindListState<unknown>>();

  /** `now` is the snapshots' clock (ms since the epoch). */
  constructor(private readonly now: () => number) {}

  /** The state of list `operation`, made with its first use. */
  of<R>(operation: string, record: z.ZodType<R>, id: (record: R) => string): KindListState<R> {
    let state = this.states.get(operation) as KindListState<R> | undefined;
    if (!state) {
      state = {
        snapshot: new ListSnapshot<R>(id, this.now),
        pageSchema: pageOf(record) as unknown as z.ZodType<Page<R>>,
      };
      this.states.set(operation, state as KindListState<unknown>);
    }
    return state;
  }
}
