/**
 * Which operations the service answers, as far as this connection knows. Many paths
 * of the endpoint table are assumptions (docs/service-assumptions.md): before the
 * operator places an order that needs one of them to finish, it must know the service
 * answers it. Every answer teaches something: an envelope (even an error envelope)
 * means the operation is there; a bare HTTP 404/405 (a router's answer) means it is
 * missing; no answer (network, timeout) or a refused key teaches nothing. Probes ask
 * once per connection; a "missing" verdict is asked again after `recheckMissingMs`, so
 * a path that comes back is noticed.
 */
import { DEFAULT_RECHECK_MISSING_MS } from "./defaults.js";
import { DEFAULT_ENDPOINTS, ENDPOINT_NAMES, type EndpointName } from "./endpoints.js";
import { ServiceAuthError, ServiceError, ServiceOperationMissingError } from "./errors.js";

/** What is known about one operation. */
export type OperationVerdict = "present" | "missing" | "unknown";

/** Operations whose path the spec does not show: the ones probed. */
export const ASSUMED_OPERATIONS: readonly EndpointName[] = ENDPOINT_NAMES.filter(
  (n) => !DEFAULT_ENDPOINTS[n].documented,
);

/** Called when the verdict of an operation changes. */
export type VerdictListener = (operation: EndpointName, verdict: OperationVerdict) => void;

/**
 * The verdict an error teaches about its operation, or undefined when it teaches
 * nothing: a refused key says nothing, since a service may check the key before it
 * routes the path.
 */
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

  /** Records what an answer taught about `operation`; listeners hear of a change. */
  record(operation: EndpointName, verdict: "present" | "missing"): void {
    const before = this.verdicts.get(operation)?.verdict;
    this.verdicts.set(operation, { verdict, at: this.now() });
    if (before !== verdict) for (const l of this.listeners) l(operation, verdict);
  }

  /** What is known about `operation`. */
  verdict(operation: EndpointName): OperationVerdict {
    return this.verdicts.get(operation)?.verdict ?? "unknown";
  }

  /** True when `operation` should be probed before relying on it: unknown, or missing a while ago. */
  needsProbe(operation: EndpointName): boolean {
    const known = this.verdicts.get(operation);
    if (!known) return true;
    return known.verdict === "missing" && this.now() - known.at >= this.recheckMissingMs;
  }

  /** Every operation with a verdict (known ones only), in table order. */
  snapshot(): Partial<Record<EndpointName, "present" | "missing">> {
    const out: Partial<Record<EndpointName, "present" | "missing">> = {};
    for (const name of ENDPOINT_NAMES) {
      const v = this.verdicts.get(name);
      if (v) out[name] = v.verdict;
    }
    return out;
  }

  /** Calls `listener` at every change of a verdict; returns a function that stops it. */
  onChange(listener: VerdictListener): () => void {
    this.listeners.push(listener);
    return () => {
      const i = this.listeners.indexOf(listener);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }
}
