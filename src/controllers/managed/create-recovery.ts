/**
 * The recovery of an unfinished create (a `create-pending` marker without an id,
 * decisions.ts): whether a failed create may have taken effect, until when it may
 * still take effect at the service, what a lookup of its client token decides
 * (lookup.ts, deletion.ts), and the tokens whose create this process never sent. Pure
 * decisions, and those memories of this process.
 */
import { noteNewest } from "../../runtime/newest-first.js";
import { DEFAULT_TIMEOUT_MS } from "../../service/defaults.js";
import { ServiceError } from "../../service/errors.js";
import type { LookupKey } from "./call.js";
import {
  ANNOTATIONS,
  type CreatePending,
  type CreateState,
  type InFlightBounds,
  markerInFlightMs,
} from "./decisions.js";

/**
 * True unless `err` proves that a create did not take effect: a service error that is
 * not `outcomeUnknown`. Any other error (unknown origin) may have happened after the
 * request was sent.
 */
export function createMayHaveHappened(err: unknown): boolean {
  return !(err instanceof ServiceError) || err.outcomeUnknown;
}

/** The lookup key of `token` for a kind that declares none: the create's client token. */
export function lookupKeyOf(declared: LookupKey | undefined, token: string): LookupKey {
  return declared ?? { what: "client token", value: token };
}

/** What a token lookup found and what is known about it. */
export interface LookupInput {
  /** The client token of the pending create ("" when the marker is malformed). */
  token: string;
  /** What the lookup matched on, for the messages ({@link lookupKeyOf}); default the token. */
  key?: LookupKey;
  /** Ids of remote resources that carry the token; undefined when the lookup operation is not available. */
  found: string[] | undefined;
  /** Milliseconds since the pending marker was written (NaN when the marker has no valid time). */
  pendingAgeMs: number;
  /**
   * How long after the marker's time the create may still take effect at the service
   * ({@link createInFlightMs}; Infinity: no bound): the window counts from its end.
   */
  inFlightMs: number;
  /** How long the service may take to list a new resource: within it, "not found" proves nothing. */
  visibilityGraceMs: number;
}

/** The decision after a token lookup. */
export type LookupDecision =
  | { decision: "Adopt"; externalId: string }
  | { decision: "Wait"; requeueAfterMs: number }
  | { decision: "Unknown"; reason: "CreateOutcomeUnknown"; message: string };

/** Longest wait between two lookups of a create whose outcome is unknown. */
export const MAX_LOOKUP_INTERVAL_MS = 30_000;

/**
 * Decides after a create whose outcome is unknown (an error after sending, or a crash
 * before the next write): exactly one match is adopted; several, or no lookup
 * operation, cannot be decided safely. No match is never "nothing was created": the
 * lookup goes on until the create can no longer take effect and then for the visibility
 * window (half the marker's age between lookups, 1 s to 30 s), then the object stops
 * with CreateOutcomeUnknown and the user decides (or lookup.ts proves it absent).
 */
export function decideAfterLookup(input: LookupInput): LookupDecision {
  const { found, pendingAgeMs, visibilityGraceMs } = input;
  const bounded = Number.isFinite(input.inFlightMs);
  const key = lookupKeyOf(input.key, input.token);
  if (!input.token || !Number.isFinite(pendingAgeMs)) {
    return {
      decision: "Unknown",
      reason: "CreateOutcomeUnknown",
      message: `the ${ANNOTATIONS.createPending} annotation is malformed (no client token or time), so the outcome of the create it records cannot be decided`,
    };
  }
  if (found === undefined) {
    return {
      decision: "Unknown",
      reason: "CreateOutcomeUnknown",
      message: `a create was sent but its outcome was not recorded, and no list operation is configured to look the resource up by its ${key.what}`,
    };
  }
  if (found.length === 1) return { decision: "Adopt", externalId: found[0] as string };
  if (found.length > 1) {
    return {
      decision: "Unknown",
      reason: "CreateOutcomeUnknown",
      message: `${found.length} remote resources carry this object's ${key.what} ${JSON.stringify(key.value)} (${found.join(", ")}); bind one with the aidc.io/external-id annotation`,
    };
  }
  const lookupMs = (bounded ? input.inFlightMs : 0) + visibilityGraceMs;
  if (pendingAgeMs < lookupMs) {
    const remaining = lookupMs - pendingAgeMs;
    const interval = Math.min(Math.max(1000, Math.round(pendingAgeMs / 2)), MAX_LOOKUP_INTERVAL_MS);
    return { decision: "Wait", requeueAfterMs: Math.max(1000, Math.min(interval, remaining)) };
  }
  return {
    decision: "Unknown",
    reason: "CreateOutcomeUnknown",
    message: `a create was sent ${Math.round(pendingAgeMs / 1000)} s ago and the service did not confirm it (an error, a timeout or a lost answer), and no remote resource with its ${key.what} ${JSON.stringify(key.value)} was listed within the visibility window (${Math.round(visibilityGraceMs / 1000)} s, service.listVisibilityWindowMs) ${bounded ? "after the create could last take effect" : "(with reconcileTimeoutMs 0 nothing bounds when a create a stopped process left was sent)"}; the create is not sent again by itself`,
  };
}

/**
 * How long after `pending.at` its create may still take effect at the service (Infinity:
 * no bound): the request timeout after its call ended, where this process sent it; else
 * what the marker records (`markerInFlightMs` of its writer's figures, decisions.ts), else
 * what `bounds` give. A restart with other figures keeps the sender's.
 */
export function createInFlightMs(pending: CreatePending, bounds: InFlightBounds): number {
  const recorded = pending.inFlightMs === undefined ? markerInFlightMs(bounds) : pending.inFlightMs;
  const atMost = recorded ?? Number.POSITIVE_INFINITY;
  const ended = createEnds.get(pending.token);
  if (ended === undefined) return atMost;
  const sinceAt = ended - Date.parse(pending.at);
  return Math.min(atMost, sinceAt + (bounds.requestTimeoutMs ?? DEFAULT_TIMEOUT_MS));
}

/** Tokens this process remembers, with a value each, at most 10,000: the oldest go first. */
function tokenMemory<V = true>() {
  const tokens = new Map<string, V>();
  return {
    add: (token: string, value: V): void => noteNewest(tokens, token, value, 10_000),
    get: (token: string): V | undefined => tokens.get(token),
    /** True once for `token` if remembered; it is forgotten. */
    take: (token: string): boolean => tokens.delete(token),
  };
}

/**
 * When (ms since the epoch, the operator's clock) the create call of each token sent in
 * this process ended: nothing of it is sent later, so its outcome is settled a request
 * timeout after that at the latest.
 */
const createEnds = tokenMemory<number>();

/** Remembers that the create call of `token` ended at `atMs` (order.ts). */
export function rememberCreateEnded(token: string, atMs: number): void {
  createEnds.add(token, atMs);
}

/**
 * Tokens of creates whose pending marker write failed in this process, so the create
 * was never sent (the marker may still have landed). Tokens are random per create, so a
 * marker carrying one is safe to drop and create anew (lookup.ts).
 */
const unsentTokens = tokenMemory();

/** Remembers that the create of `token` was never sent (order.ts). */
export function rememberUnsent(token: string): void {
  unsentTokens.add(token, true);
}

/**
 * True once for `token` when its create's pending marker write failed in this process
 * (the create was never sent); the token is forgotten.
 */
export function takeUnsentToken(token: string): boolean {
  return unsentTokens.take(token);
}

/**
 * Creates (object uid and token) that answered in this process that they took effect,
 * naming no resource: the one resource the lookup finds is the create's own. Kept here,
 * not in an annotation, which whoever may edit the object could write.
 */
const answeredCreates = tokenMemory();

/** Remembers that the create of `token` by object `uid` answered without an id (order.ts). */
export function rememberAnswered(uid: string, token: string): void {
  answeredCreates.add(`${uid}/${token}`, true);
}

/** True once when the create of `token` by object `uid` answered in this process. */
export function takeAnswered(uid: string, token: string): boolean {
  return answeredCreates.take(`${uid}/${token}`);
}

/** What finds a create in flight in the service: ` (subscription <key>, client token <t>)`. */
export function inFlightMarks(state: CreateState): string {
  const marks = [
    state.subscriptionKey && `subscription ${state.subscriptionKey}`,
    state.pending?.token && `client token ${state.pending.token}`,
  ].filter(Boolean);
  return marks.length > 0 ? ` (${marks.join(", ")})` : "";
}

/**
 * Whether a subscription poll `res` of an order sent `ageMs` ago is a result the service
 * no longer keeps: an empty answer (null or `{}`, read as Pending) past the visibility
 * window `windowMs`, which the longest order takes less than. Its token finds its resource.
 */
export function resultLeftEmpty(
  res: { state: string; empty?: true | undefined },
  ageMs: number,
  windowMs: number,
): boolean {
  return res.state === "Pending" && res.empty === true && ageMs >= windowMs;
}
