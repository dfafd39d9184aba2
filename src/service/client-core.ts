/**
 * The core of the service client: the transport, the endpoint table and what is known
 * of each operation (probes, verdicts). It calls operations by name for the kinds'
 * operations modules (src/service/kinds/<kind>.ts), which `ServiceClient` (client.ts)
 * holds beside it.
 */
import { z } from "zod";
import { type CallContext, UNSCOPED_CALLS } from "./call-context.js";
import type { ServiceClientOptions } from "./client-options.js";
import {
  DEFAULT_IDLE_SOCKET_TIMEOUT_MS,
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_RATE_LIMIT,
  DEFAULT_RETRY_POLICY,
  DEFAULT_TIMEOUT_MS,
} from "./defaults.js";
import {
  type EndpointDefinition,
  type EndpointName,
  isEndpointName,
  resolveEndpointTable,
} from "./endpoints.js";
import {
  EndpointDisabledError,
  endpointConfigKey,
  ServiceInvalidRequestError,
  ServiceOperationMissingError,
} from "./errors.js";
import {
  ASSUMED_OPERATIONS,
  OperationAvailability,
  type OperationVerdict,
  verdictOfError,
} from "./operation-availability.js";
import type { OperationArgs, OperationCaller, OperationState } from "./operation-caller.js";
import { describeIssues } from "./schemas/primitives.js";
import { priorityOf, ServiceTransport } from "./transport.js";

/** The value of every path parameter of a probe: an id no resource has. */
export const PROBE_ID = "aidc-operator-probe";

/** Calls the operations of the endpoint table for one account, and knows which the service answers. */
export class ServiceClientCore implements OperationCaller {
  private readonly transport: ServiceTransport;
  private readonly endpoints: Record<EndpointName, EndpointDefinition | null>;
  private readonly probes = new Map<EndpointName, Promise<OperationVerdict>>();
  /** What this connection knows about which operations the service answers. */
  readonly operations: OperationAvailability;
  /**
   * `now` is the clock of the verdicts (ms since the epoch). Throws an Error when the
   * endpoint overrides are invalid (unknown name, bad path).
   */
  constructor(options: ServiceClientOptions, now: () => number) {
    this.endpoints = resolveEndpointTable(options.endpoints);
    this.operations = new OperationAvailability(options.recheckMissingMs, now);
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
      routineShare: options.routineShare,
      endpoints: this.endpoints,
      logger: options.logger,
      onRequest: options.onRequest,
      ...(options.random ? { random: options.random } : {}),
      ...(options.sleep ? { sleep: options.sleep } : {}),
    });
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
   * `EndpointDisabledError` for a disabled operation. The probe is made under `context`
   * (the first asker's).
   */
  async probeOperation(
    name: EndpointName,
    context: CallContext = UNSCOPED_CALLS,
  ): Promise<OperationVerdict> {
    const def = this.endpoints[name];
    if (!def) throw new EndpointDisabledError(name);
    const running = this.probes.get(name);
    if (running) return running;
    const params: Record<string, string> = {};
    for (const m of def.path.matchAll(/\{(\w+)\}/g)) params[m[1] as string] = PROBE_ID;
    const probe = this.transport
      .call(name, { params, ...(def.method === "GET" ? {} : { body: {} }) }, z.unknown(), context)
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
  async requireOperations(
    names: readonly string[],
    purpose: string,
    context: CallContext = UNSCOPED_CALLS,
  ): Promise<void> {
    for (const name of names) endpointNamed(name);
    this.transport.refuseLongWait(
      (names[0] as EndpointName | undefined) ?? "requireOperations",
      priorityOf(context),
    );
    for (const name of names as readonly EndpointName[]) {
      if (!this.endpoints[name]) throw new EndpointDisabledError(name);
      const verdict = this.operations.needsProbe(name)
        ? await this.probeOperation(name, context)
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

  /**
   * Calls operation `name` of the endpoint table: how the kinds' operations
   * (src/service/kinds/<kind>.ts) reach the service. Throws an Error for a name the
   * table does not have, else as `ServiceTransport.call` (errors and retries).
   */
  request<T>(
    name: string,
    args: OperationArgs,
    schema: z.ZodType<T>,
    context: CallContext = UNSCOPED_CALLS,
  ): Promise<T> {
    return this.transport.call(endpointNamed(name), args, schema, context);
  }

  /** What is known of operation `name`, without a request (OperationCaller). */
  operationState(name: string): OperationState {
    const op = endpointNamed(name);
    if (!this.endpoints[op]) return "disabled";
    const verdict = this.operations.verdict(op);
    if (verdict === "missing" && this.operations.needsProbe(op)) return "unknown";
    return verdict;
  }

  /** Whether the service answered `name` with a bare 404/405 (a recheck due or not). */
  knownMissing(name: string): boolean {
    return this.operations.verdict(endpointNamed(name)) === "missing";
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
}

/** `name` as an operation of the endpoint table; throws an Error for any other string. */
function endpointNamed(name: string): EndpointName {
  if (!isEndpointName(name))
    throw new Error(`no service operation "${name}" in the endpoint table`);
  return name;
}
