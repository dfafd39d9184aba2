/**
 * Fault injection for the emulated service API (never the admin API): 500 envelopes,
 * latency, dropped connections, malformed JSON and 429, and the answers of a hostile
 * service (redirects elsewhere, huge and endless bodies, messages quoting the key that
 * was sent), each with a probability, an optional target (endpoint name, method, path
 * prefix, endpoints left out) and an optional count after which the rule expires. A
 * fault is answered instead of handling the request, or, with `acting`, after handling
 * it (the request takes effect and its caller still sees a failure: a create that acts
 * and then answers 500). Randomness comes from the emulator's seeded source, so a
 * seeded run fails the same requests every time.
 */
import { z } from "zod";

/** Kinds of fault. */
export const FAULT_KINDS = [
  "error",
  "latency",
  "drop",
  "malformed",
  "rateLimit",
  "redirect",
  "oversized",
  "endless",
] as const;

/** One fault rule. */
export const faultRuleSchema = z.strictObject({
  /**
   * error: an error envelope (status 500 unless `status` says otherwise);
   * latency: wait `latencyMs` before answering (rules of this kind add up);
   * drop: destroy the connection without an answer;
   * malformed: a truncated JSON body with HTTP 200;
   * rateLimit: HTTP 429 with a 429 envelope (and Retry-After when set);
   * redirect: HTTP `status` (302 unless a 3xx is set) with `Location: location`;
   * oversized: a valid 200 envelope padded to `bodyBytes`;
   * endless: a 200 envelope whose chunked body never ends (until the client hangs up).
   */
  kind: z.enum(FAULT_KINDS),
  /** Probability per matching request, 0..1. Default 1. */
  rate: z.number().min(0).max(1).default(1),
  /** Only requests routed to this endpoint name. */
  endpoint: z.string().optional(),
  /** Not requests routed to these endpoint names. */
  exceptEndpoints: z.array(z.string()).optional(),
  /** Only this HTTP method. */
  method: z.string().optional(),
  /** Only operation paths (after the emulator's base path) starting with this. */
  pathPrefix: z.string().optional(),
  /** Expires after applying this many times. */
  times: z.int().positive().optional(),
  /**
   * Lets this many matching requests through before the rule applies (e.g. the second
   * template list of a create, after the first one of its preflight). Default 0.
   */
  skip: z.int().min(0).default(0),
  /** For latency. */
  latencyMs: z.int().min(0).default(0),
  /** Envelope status of an error fault. Default 500. */
  status: z.int().default(500),
  /**
   * HTTP status of an error fault. Default: 200, or the envelope status when the
   * emulator mirrors envelope statuses (`httpStatusMirrorsEnvelope`).
   */
  httpStatus: z.int().min(200).max(599).optional(),
  /**
   * Handle the request first (it takes effect), then answer the fault instead of its
   * result: an error or drop after the service acted. Default false (nothing happens).
   */
  acting: z.boolean().default(false),
  /** Envelope message of an error fault. */
  message: z.string().optional(),
  /**
   * An error fault's message quotes the API key the request carried, as a careless
   * service might ("invalid key sk-…"): tests prove the operator never repeats it.
   */
  echoKey: z.boolean().default(false),
  /** Location of a redirect fault. */
  location: z.string().default("/"),
  /** Size of an oversized body, in bytes. Default 30 MiB. */
  bodyBytes: z
    .int()
    .positive()
    .default(30 * 1024 * 1024),
  /** Retry-After of a rateLimit fault, in seconds. */
  retryAfterSeconds: z.int().min(0).optional(),
});

/** A fault rule as given (defaults not yet applied). */
export type FaultRuleInput = z.input<typeof faultRuleSchema>;
/** A fault rule with its defaults. */
export type FaultRule = z.output<typeof faultRuleSchema>;

/** What to do with one request. */
export interface FaultDecision {
  /** Total added latency. */
  latencyMs: number;
  /** The terminal fault to apply instead of handling, if any. */
  fault?: FaultRule;
}

/** What a request looks like to the rules. */
export interface FaultTarget {
  endpoint: string | undefined;
  method: string;
  path: string;
}

/** The active rules and the decision per request. */
export class FaultInjector {
  private rules: FaultRule[] = [];

  constructor(private readonly random: () => number) {}

  /** Replaces the rules; throws a ZodError for an invalid rule. */
  set(rules: FaultRuleInput[]): void {
    this.rules = rules.map((r) => faultRuleSchema.parse(r));
  }

  /** The active rules (with remaining `times`). */
  list(): FaultRule[] {
    return this.rules.map((r) => ({ ...r }));
  }

  /** Removes every rule. */
  clear(): void {
    this.rules = [];
  }

  /** Decides for one request; consumes `times` of the rules that apply. */
  decide(target: FaultTarget): FaultDecision {
    const decision: FaultDecision = { latencyMs: 0 };
    if (this.rules.length === 0) return decision;
    for (const rule of this.rules) {
      if (decision.fault && rule.kind !== "latency") continue;
      if (!matches(rule, target)) continue;
      if (rule.skip > 0) {
        rule.skip -= 1;
        continue;
      }
      if (this.random() >= rule.rate) continue;
      if (rule.times !== undefined) rule.times -= 1;
      if (rule.kind === "latency") decision.latencyMs += rule.latencyMs;
      else decision.fault = rule;
    }
    this.rules = this.rules.filter((r) => r.times === undefined || r.times > 0);
    return decision;
  }
}

function matches(rule: FaultRule, t: FaultTarget): boolean {
  if (rule.endpoint !== undefined && rule.endpoint !== t.endpoint) return false;
  if (t.endpoint !== undefined && rule.exceptEndpoints?.includes(t.endpoint)) return false;
  if (rule.method !== undefined && rule.method.toUpperCase() !== t.method) return false;
  if (rule.pathPrefix !== undefined && !t.path.startsWith(rule.pathPrefix)) return false;
  return true;
}
