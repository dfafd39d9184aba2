/**
 * Which operations the service answers, as far as this connection knows, and asking it:
 * many paths are assumptions (docs/service-assumptions.md), and an order needing one
 * must not start unless the service answers it. An envelope (even an error one) means
 * present, a bare HTTP 404/405 missing; no answer or a refused key teaches nothing. A
 * "missing" verdict is asked again after `recheckMissingMs`.
 */
import { z } from "zod";
import { type CallContext, UNSCOPED_CALLS } from "./call-context.js";
import { DEFAULT_RECHECK_MISSING_MS } from "./defaults.js";
import {
  DEFAULT_ENDPOINTS,
  ENDPOINT_NAMES,
  type EndpointDefinition,
  type EndpointName,
} from "./endpoints.js";
import {
  EndpointDisabledError,
  endpointConfigKey,
  ServiceAuthError,
  ServiceError,
  ServiceOperationMissingError,
} from "./errors.js";
import type { OperationArgs, OperationState } from "./operation-caller.js";

export type OperationVerdict = "present" | "missing" | "unknown";

/** Operations whose path the spec does not show: the ones probed. */
export const ASSUMED_OPERATIONS: readonly EndpointName[] = ENDPOINT_NAMES.filter(
  (n) => !DEFAULT_ENDPOINTS[n].documented,
);

export type VerdictListener = (
  operation: EndpointName,
  verdict: OperationVerdict,
  before: OperationVerdict,
) => void;

/** What an error teaches about its operation; a refused key nothing (checked before routing). */
export function verdictOfError(err: unknown): "present" | "missing" | undefined {
  if (err instanceof ServiceOperationMissingError) return "missing";
  if (err instanceof ServiceAuthError) return undefined;
  if (err instanceof ServiceError && err.enveloped) return "present";
  return undefined;
}

/** The verdicts of one connection (one service client). */
export class OperationAvailability {
  private readonly verdicts = new Map<
    EndpointName,
    { verdict: "present" | "missing"; at: number }
  >();
  private readonly listeners: VerdictListener[] = [];

  constructor(
    private readonly recheckMissingMs = DEFAULT_RECHECK_MISSING_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records what an answer taught; listeners hear of a change. */
  record(operation: EndpointName, verdict: "present" | "missing"): void {
    const before = this.verdict(operation);
    this.verdicts.set(operation, { verdict, at: this.now() });
    if (before !== verdict) for (const l of this.listeners) l(operation, verdict, before);
  }

  verdict(operation: EndpointName): OperationVerdict {
    return this.verdicts.get(operation)?.verdict ?? "unknown";
  }

  /** Unknown, or missing a while ago: probe before relying on it. */
  needsProbe(operation: EndpointName): boolean {
    const known = this.verdicts.get(operation);
    if (!known) return true;
    return known.verdict === "missing" && this.now() - known.at >= this.recheckMissingMs;
  }

  /** The known verdicts, in table order. */
  snapshot(): Partial<Record<EndpointName, "present" | "missing">> {
    const out: Partial<Record<EndpointName, "present" | "missing">> = {};
    for (const name of ENDPOINT_NAMES) {
      const v = this.verdicts.get(name);
      if (v) out[name] = v.verdict;
    }
    return out;
  }

  /** Calls `listener` at every change of a verdict; returns its stop. */
  onChange(listener: VerdictListener): () => void {
    this.listeners.push(listener);
    return () => {
      const i = this.listeners.indexOf(listener);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }
}

/** The value of every path parameter of a probe: an id no resource has. */
export const PROBE_ID = "aidc-operator-probe";

/** One call of an operation (`ServiceTransport.call`). */
export interface ProbeTransport {
  call(
    name: EndpointName,
    args: OperationArgs,
    schema: z.ZodType,
    context: CallContext,
  ): Promise<unknown>;
}

/** Asks the service which operations it answers; the transport teaches `operations` too. */
export class OperationProbes {
  private readonly probes = new Map<EndpointName, Promise<OperationVerdict>>();

  constructor(
    private readonly endpoints: Record<EndpointName, EndpointDefinition | null>,
    readonly operations: OperationAvailability,
    private readonly transport: ProbeTransport,
  ) {}

  /**
   * Asks whether the service answers `name`, for an id no resource has (a POST carries
   * `{}`); concurrent asks share one. Throws the call's error when the answer teaches nothing.
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
   * Resolves when every operation of `names` is enabled and answered (probed when unknown
   * or missing a while ago); else throws for the first that is not, before any order.
   */
  async requireOperations(
    names: readonly string[],
    purpose: string,
    context: CallContext = UNSCOPED_CALLS,
  ): Promise<void> {
    for (const name of names.map(endpointNamed)) {
      const def = this.endpoints[name];
      if (!def) throw new EndpointDisabledError(name);
      const verdict = this.operations.needsProbe(name)
        ? await this.probeOperation(name, context)
        : this.operations.verdict(name);
      if (verdict === "missing") {
        throw new ServiceOperationMissingError(
          `the service does not answer the operation ${name} (${def.method} ${def.path}: HTTP 404 without a service envelope), which ${purpose} needs; nothing is ordered. Confirm the path with the service and set it with ${endpointConfigKey(name)} in the operator configuration`,
          { endpoint: name, code: 404 },
        );
      }
    }
  }

  /**
   * Probes every enabled assumed read (GET), for the start-up log and metrics; one that
   * changes something is never probed (its first call teaches).
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

  /** What is known of `name`, without a request. */
  operationState(name: string): OperationState {
    const op = endpointNamed(name);
    if (!this.endpoints[op]) return "disabled";
    const verdict = this.operations.verdict(op);
    if (verdict === "missing" && this.operations.needsProbe(op)) return "unknown";
    return verdict;
  }

  /** Whether the service answered `name` with a bare 404/405. */
  knownMissing(name: string): boolean {
    return this.operations.verdict(endpointNamed(name)) === "missing";
  }
}

/** `name` as an operation of the endpoint table; throws an Error for any other string. */
export function endpointNamed(name: string): EndpointName {
  if (!Object.hasOwn(DEFAULT_ENDPOINTS, name))
    throw new Error(`no service operation "${name}" in the endpoint table`);
  return name as EndpointName;
}
