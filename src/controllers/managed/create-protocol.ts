/**
 * The crash-safe create protocol as pure decisions (docs/architecture.md says why it is
 * safe). Each step is recorded in an annotation before the next begins:
 * `aidc.io/create-pending` {token, at, generation} before the create call (the token
 * travels with the remote resource), then `aidc.io/subscription-key` until the order
 * resolves, and `aidc.io/external-id`. The marker stays beside them (an id decides the
 * step), so no write that drops one leaves the object without a record. A crash before
 * either is written leaves the marker, whose token finds the resource (`LookupByToken`;
 * what the lookup decides is create-recovery.ts): the create is never sent twice.
 * Annotations, not status: backup tools do not restore status.
 */
import { randomUUID } from "node:crypto";
import { DEFAULT_RECONCILE_TIMEOUT_MS } from "../../runtime/defaults.js";
import { DEFAULT_TIMEOUT_MS } from "../../service/defaults.js";
import { ServiceNotFoundError, ServiceUnavailableError } from "../../service/errors.js";

/** Annotation keys of the protocol. */
export const ANNOTATIONS = {
  externalId: "aidc.io/external-id",
  subscriptionKey: "aidc.io/subscription-key",
  createPending: "aidc.io/create-pending",
  /** Generation whose create failed remotely; a newer generation tries again. */
  createFailedGeneration: "aidc.io/create-failed-generation",
  /**
   * RFC 3339 time a delete answered "InProgress": the loop observes until the resource
   * is gone instead of deleting again (deletion.ts).
   */
  deleteRequested: "aidc.io/delete-requested",
} as const;

/** What `aidc.io/create-pending` records. */
export interface CreatePending {
  /** Client token carried by the remote resource. */
  token: string;
  /** RFC 3339 time the create was about to be sent. */
  at: string;
  /** metadata.generation the create was made for. */
  generation: number;
  /**
   * How long after `at` the create may still take effect at the service, as the writer's
   * config bounded it (create-recovery.ts, `createInFlightMs`); null: no bound; absent
   * from a marker written without it (the reader's config then bounds it).
   */
  inFlightMs?: number | null;
}

/** The protocol's durable state, read from annotations. */
export interface CreateState {
  externalId?: string;
  subscriptionKey?: string;
  pending?: CreatePending;
  failedGeneration?: number;
}

/** Reads the protocol state; a malformed create-pending value counts as a pending create with no token. */
export function readCreateState(annotations: Record<string, string> | undefined): CreateState {
  const a = annotations ?? {};
  const state: CreateState = {};
  const externalId = a[ANNOTATIONS.externalId]?.trim();
  if (externalId) state.externalId = externalId;
  const key = a[ANNOTATIONS.subscriptionKey]?.trim();
  if (key) state.subscriptionKey = key;
  const pending = a[ANNOTATIONS.createPending];
  if (pending !== undefined) state.pending = parsePending(pending);
  const failed = Number(a[ANNOTATIONS.createFailedGeneration]);
  if (Number.isInteger(failed) && failed > 0) state.failedGeneration = failed;
  return state;
}

/**
 * What identifies the resource of a create in flight in the service, for a person who
 * must find it there once the object is gone: ` (subscription <key>, client token <t>)`,
 * or "" when neither is known.
 */
export function inFlightMarks(state: CreateState): string {
  const marks = [
    state.subscriptionKey && `subscription ${state.subscriptionKey}`,
    state.pending?.token && `client token ${state.pending.token}`,
  ].filter(Boolean);
  return marks.length > 0 ? ` (${marks.join(", ")})` : "";
}

function parsePending(raw: string): CreatePending {
  try {
    const v = JSON.parse(raw) as Partial<CreatePending>;
    const inFlightMs = v.inFlightMs;
    return {
      token: typeof v.token === "string" ? v.token : "",
      at: typeof v.at === "string" ? v.at : "",
      generation: typeof v.generation === "number" ? v.generation : 0,
      ...(inFlightMs === null || (typeof inFlightMs === "number" && inFlightMs >= 0)
        ? { inFlightMs }
        : {}),
    };
  } catch {
    return { token: "", at: "", generation: 0 };
  }
}

/**
 * What bounds how long after its marker a create may still take effect: the loop's
 * timeouts (those of `ManagedOptions`, external-client.ts).
 */
export interface InFlightBounds {
  reconcileTimeoutMs?: number | undefined;
  requestTimeoutMs?: number | undefined;
}

/**
 * How long after its marker a create sent under `bounds` may still take effect at the
 * service, for the marker to record: it is sent within its reconcile (an abandoned
 * reconcile sends nothing more), and the service is given the request timeout to act on
 * it. Null when reconciles have no bound (`reconcileTimeoutMs` 0).
 */
export function markerInFlightMs(bounds: InFlightBounds): number | null {
  const reconcileMs = bounds.reconcileTimeoutMs ?? DEFAULT_RECONCILE_TIMEOUT_MS;
  return reconcileMs > 0 ? reconcileMs + (bounds.requestTimeoutMs ?? DEFAULT_TIMEOUT_MS) : null;
}

/** Serialises a create-pending record for the annotation. */
export function formatPending(p: CreatePending): string {
  const { token, at, generation, inFlightMs } = p;
  return JSON.stringify({
    token,
    at,
    generation,
    ...(inFlightMs === undefined ? {} : { inFlightMs }),
  });
}

/** The next step of the protocol for the current state. */
export type CreateStep =
  | { step: "Observe"; externalId: string }
  | { step: "PollSubscription"; key: string }
  | { step: "LookupByToken"; pending: CreatePending }
  | { step: "WaitForSpecChange"; failedGeneration: number }
  | { step: "Create" };

/**
 * Decides what to do next. The order matters: a known id wins over a key, a key
 * over a pending marker; only a state with none of them may create.
 */
export function nextCreateStep(state: CreateState, generation: number): CreateStep {
  if (state.externalId) return { step: "Observe", externalId: state.externalId };
  if (state.subscriptionKey) return { step: "PollSubscription", key: state.subscriptionKey };
  if (state.pending) return { step: "LookupByToken", pending: state.pending };
  if (state.failedGeneration !== undefined && state.failedGeneration >= generation) {
    return { step: "WaitForSpecChange", failedGeneration: state.failedGeneration };
  }
  return { step: "Create" };
}

/** A fresh client token for a create. */
export function newClientToken(): string {
  return randomUUID();
}

/**
 * When a subscription result reads as forgotten, so that the create's client token must
 * find its resource: the key answered as unknown (an envelope 404), or, from a service
 * that answers every unknown id with a 500, {@link FAILED_POLLS_FOR_LOOKUP} 5xx polls in
 * a row (each already retried by the client); else such a key would be polled for ever.
 * Counted in memory per object and key: a restart counts anew.
 */
/** Polls in a row that fail with a 5xx before the result counts as forgotten. */
export const FAILED_POLLS_FOR_LOOKUP = 3;

const failedPolls = new Map<string, number>();

/**
 * Whether the poll of `key` for the object `objectKey`, which failed with `err`, leaves
 * the result forgotten; a true answer forgets the count.
 */
export function resultForgotten(objectKey: string, key: string, err: unknown): boolean {
  if (err instanceof ServiceNotFoundError) return true;
  const id = `${objectKey}/${key}`;
  if (!(err instanceof ServiceUnavailableError) || (err.code ?? 0) < 500) {
    failedPolls.delete(id);
    return false;
  }
  const failed = (failedPolls.get(id) ?? 0) + 1;
  if (failed < FAILED_POLLS_FOR_LOOKUP) {
    failedPolls.set(id, failed);
    return false;
  }
  failedPolls.delete(id);
  return true;
}

/** The poll of `key` for `objectKey` was answered: failures before it no longer count. */
export function resultAnswered(objectKey: string, key: string): void {
  failedPolls.delete(`${objectKey}/${key}`);
}
