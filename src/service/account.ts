/**
 * One account of the service. A {@link ServiceAccount} is what all work on it shares: the
 * transport (its rate limit), the endpoint table, what is known of each operation, product
 * catalogs for a TTL and list snapshots (kind-list.ts). {@link AccountCalls} (`withCall`)
 * makes one reconcile's calls, also through each kind's module (`calls.nas.get(id)`).
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
import { KindListStates } from "./kind-list.js";
import { CciOperations } from "./kinds/cciinstance.js";
import { NasOperations } from "./kinds/nasvolume.js";
import { DEFAULT_CREATE_TASK_FIELDS, TrainingTaskOperations } from "./kinds/trainingjob.js";
import { TrainingPodOperations } from "./kinds/trainingjob.pods.js";
import { TemplateOperations } from "./kinds/trainingtemplate.js";
import { endpointNamed, OperationAvailability, OperationProbes } from "./operation-availability.js";
import type {
  CatalogReads,
  OperationArgs,
  OperationCaller,
  OperationState,
  OperationsContext,
} from "./operation-caller.js";
import { priorityOf } from "./rate-limiter.js";
import {
  type SubscriptionResult,
  subscriptionKeySchema,
  subscriptionResultSchema,
} from "./schemas/create.js";
import { describeIssues } from "./schemas/primitives.js";
import { ServiceTransport } from "./transport.js";

/** What all work on one account shares; a kind may key what it remembers of answers on it. */
export class ServiceAccount {
  readonly transport: ServiceTransport;
  readonly endpoints: Record<EndpointName, EndpointDefinition | null>;
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
      userAgent: options.userAgent ?? "aidc-operator",
      ...(options.httpClient ? { httpClient: options.httpClient } : {}),
      ...(options.proxyFor ? { proxyFor: options.proxyFor } : {}),
      retry: options.retry ?? DEFAULT_RETRY_POLICY,
      rateLimit: options.rateLimit === undefined ? DEFAULT_RATE_LIMIT : options.rateLimit,
      rateLimitMaxWaitMs: options.rateLimitMaxWaitMs,
      routineShare: options.routineShare,
      endpoints: this.endpoints,
      logger: options.logger,
      metrics: options.metrics,
      onRequest: options.onRequest,
      mayCall: options.mayCall,
      ...(options.random ? { random: options.random } : {}),
      ...(options.sleep ? { sleep: options.sleep } : {}),
    });
    this.probes = new OperationProbes(this.endpoints, operations, this.transport);
    this.catalog = new CatalogCache(options.catalogTtlMs ?? DEFAULT_CATALOG_TTL_MS, this.now);
    this.lists = new KindListStates(this.now);
  }

  /** Calls operation `name` under `context` (`ServiceTransport.call`). */
  request<T>(
    name: string,
    args: OperationArgs,
    schema: z.ZodType<T>,
    context: CallContext,
  ): Promise<T> {
    return this.transport.call(endpointNamed(name), args, schema, context);
  }

  /** Returns `body` when `schema` accepts it, else throws `ServiceInvalidRequestError`. */
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
   * `OperationProbes.requireOperations`, first refusing when the rate limit is saturated:
   * the order would be bounced at its first call anyway, after a create-pending write.
   */
  async requireOperations(
    names: readonly string[],
    purpose: string,
    context: CallContext,
  ): Promise<void> {
    this.transport.refuseLongWait(names[0] ?? "requireOperations", priorityOf(context));
    return this.probes.requireOperations(names, purpose, context);
  }

  /** The calls of one piece of work on this account, made under `context`. */
  withCall(context: CallContext): AccountCalls {
    return new AccountCalls(this, context);
  }
}

/** The calls of one reconcile on an account, under its `context`; kinds' modules made at first use. */
export class AccountCalls implements OperationCaller {
  private nasOps?: NasOperations;
  private taskOps?: TrainingTaskOperations;
  private podOps?: TrainingPodOperations;
  private templateOps?: TemplateOperations;
  private cciOps?: CciOperations;

  constructor(
    readonly account: ServiceAccount,
    readonly context: CallContext,
  ) {}

  get nas(): NasOperations {
    this.nasOps ??= new NasOperations(this.kindContext());
    return this.nasOps;
  }

  get tasks(): TrainingTaskOperations {
    this.taskOps ??= new TrainingTaskOperations(this.kindContext(), {
      ...DEFAULT_CREATE_TASK_FIELDS,
      ...this.account.options.createTaskFields,
    });
    return this.taskOps;
  }

  get pods(): TrainingPodOperations {
    this.podOps ??= new TrainingPodOperations(this.kindContext());
    return this.podOps;
  }

  get templates(): TemplateOperations {
    this.templateOps ??= new TemplateOperations(this.kindContext());
    return this.templateOps;
  }

  get cci(): CciOperations {
    this.cciOps ??= new CciOperations(this);
    return this.cciOps;
  }

  get operations(): OperationAvailability {
    return this.account.probes.operations;
  }

  request<T>(name: string, args: OperationArgs, schema: z.ZodType<T>): Promise<T> {
    return this.account.request(name, args, schema, this.context);
  }

  checkedBody(name: string, schema: z.ZodType, body: unknown): unknown {
    return this.account.checkedBody(name, schema, body);
  }

  operationState(name: string): OperationState {
    return this.account.probes.operationState(name);
  }

  requireOperations(names: readonly string[], purpose: string): Promise<void> {
    return this.account.requireOperations(names, purpose, this.context);
  }

  /** Whether operation `name` is enabled; a disabled one throws `EndpointDisabledError`. */
  isEndpointEnabled(name: EndpointName): boolean {
    return this.account.endpoints[name] !== null;
  }

  /** What a kind's module calls through: these calls and the account's memory. */
  private kindContext(): OperationsContext {
    const { account } = this;
    const mapping = account.options.subscriptionResult ?? {};
    return {
      caller: this,
      now: account.now,
      catalog: account.catalog,
      lists: account.lists,
      knownMissing: (name) => account.probes.knownMissing(name),
      subscriptionResult: (name, key) => readSubscriptionResult(this, name, key, mapping),
      subscriptionKey: subscriptionKeySchema(mapping),
    };
  }
}

/** Subscription `key`'s result read with `mapping`; unreadable data: `ServiceResultShapeError`. */
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

/** The product catalogs' cache of an account: one answer in flight shared, a failure forgotten. */
export class CatalogCache implements CatalogReads {
  private readonly answers = new Map<string, { at: number; answer: Promise<unknown> }>();

  /** `ttlMs` 0 or less reads every time. */
  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

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

  /** Drops every answer: the next read of each key asks the service. */
  forget(): void {
    this.answers.clear();
  }
}
