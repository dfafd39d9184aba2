/**
 * The two kinds of reconcile failure. A reconciler throws
 * one of these, with a PascalCase `reason` and the underlying `cause`; the controller
 * decides from the class what happens next:
 *
 * - {@link RetryableError} (and any error not known to be terminal): the key is
 *   requeued with per-key exponential backoff.
 * - {@link TerminalError} (or any error carrying `retryable === false`, such as the
 *   service client's 403 or validation errors): the key is not requeued until the
 *   object itself changes (generation, annotations, labels or deletion) or a watched
 *   object mapped to it changes.
 * - A terminal error that is {@link isExternalHold external} (the far side refused
 *   for a reason of its own: a refused API key, a missing operation, an answer of an
 *   unknown shape) is held the same way, and also retried on a slow, bounded backoff
 *   (the controller's `holdBackoff`), since the far side can recover without any
 *   change of the object.
 */

/** Options shared by both error classes. */
export interface ReconcileErrorOptions {
  /** The error this one wraps; kept as the standard `cause`. */
  cause?: unknown;
  /**
   * For a {@link TerminalError}: the failure lies outside the object (see
   * {@link isExternalHold}); it is retried on the slow hold backoff too.
   */
  external?: boolean;
  /**
   * RetryableError only: the failure is an expected wait for something on its way (a
   * referenced object not ready yet), so its Event is Normal, not Warning.
   */
  waiting?: boolean;
  /**
   * RetryableError only: retry after this long instead of the key's exponential
   * backoff (e.g. when a client-side rate limit says when it will have room).
   */
  requeueAfterMs?: number;
}

/** A failure that may succeed when tried again later (network, 5xx, 429, conflicts). */
export class RetryableError extends Error {
  /** PascalCase reason, used for the Synced condition and Warning events. */
  readonly reason: string;
  /** Always true; lets duck-typed checks (`retryable === false`) work across layers. */
  readonly retryable = true;
  /** An expected wait (see {@link ReconcileErrorOptions.waiting}): a Normal event. */
  readonly waiting: boolean;

  /** See {@link ReconcileErrorOptions.requeueAfterMs}. */
  readonly requeueAfterMs: number | undefined;

  constructor(reason: string, message: string, options: ReconcileErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.name = "RetryableError";
    this.reason = reason;
    this.waiting = options.waiting ?? false;
    this.requeueAfterMs = options.requeueAfterMs;
  }
}

/** A failure that will repeat until a person changes something (403, refused input). */
export class TerminalError extends Error {
  /** PascalCase reason, used for the Synced condition and Warning events. */
  readonly reason: string;
  /** Always false: see {@link isTerminal}. */
  readonly retryable = false;
  /** The far side, not the object, must change: see {@link isExternalHold}. */
  readonly external: boolean;

  constructor(reason: string, message: string, options: ReconcileErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.name = "TerminalError";
    this.reason = reason;
    this.external = options.external ?? isExternalHold(options.cause);
  }
}

/**
 * True when retrying cannot help: a {@link TerminalError}, or any object whose
 * `retryable` property is exactly `false` (duck-typed, so errors of other layers, e.g.
 * the service client's, are classified without being imported here).
 */
export function isTerminal(err: unknown): boolean {
  if (err instanceof TerminalError) return true;
  return (
    typeof err === "object" &&
    err !== null &&
    "retryable" in err &&
    (err as { retryable: unknown }).retryable === false
  );
}

/**
 * True for a terminal error whose cause lies outside the object: the remote side
 * refused for a reason of its own (the API key, a missing operation, an answer of an
 * unknown shape), so it may succeed later without a change of the object. Duck-typed
 * like {@link isTerminal}: any terminal object whose `external` property is exactly
 * `true`. A spec the far side refuses is not external: only a change of it can help.
 */
export function isExternalHold(err: unknown): boolean {
  return (
    isTerminal(err) &&
    typeof err === "object" &&
    err !== null &&
    "external" in err &&
    (err as { external: unknown }).external === true
  );
}

/**
 * The PascalCase reason of an error: its own `reason` when it has a PascalCase one,
 * otherwise `fallback` (default `ReconcileError`).
 */
export function errorReason(err: unknown, fallback = "ReconcileError"): string {
  if (typeof err === "object" && err !== null && "reason" in err) {
    const reason = (err as { reason: unknown }).reason;
    if (typeof reason === "string" && /^[A-Z][A-Za-z0-9]*$/.test(reason)) return reason;
  }
  return fallback;
}

/** The message of any thrown value, for logs, events and conditions. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/**
 * What the runtime does with a key held by an {@link isExternalHold external} terminal
 * error, as said after the error's message (controller-keys.ts's TerminalHolds).
 */
export const HOLD_RETRY_NOTE =
  "tried again on a slow backoff (holdBackoff), and at once when the object, its API key or its connection changes";

/**
 * The message of a failed reconcile as conditions and Events say it: the error's own,
 * and for an external hold what the runtime does next ({@link HOLD_RETRY_NOTE}). The
 * errors say no retry of their own: the same error can be retried otherwise where it
 * is caught and wrapped (a retryable error, a poll), which says its own.
 */
export function failureMessage(err: unknown): string {
  const message = errorMessage(err);
  return isExternalHold(err) ? `${message}; ${HOLD_RETRY_NOTE}` : message;
}

/**
 * When a retryable failure asks to be retried (its own `requeueAfterMs`, a positive
 * number; duck-typed like {@link isTerminal}, so errors of other layers may carry it),
 * or undefined for the key's exponential backoff.
 */
export function requeueAfterOf(err: unknown): number | undefined {
  if (typeof err !== "object" || err === null || !("requeueAfterMs" in err)) return undefined;
  const ms = (err as { requeueAfterMs: unknown }).requeueAfterMs;
  return typeof ms === "number" && Number.isFinite(ms) && ms > 0 ? ms : undefined;
}

/** A write refused because the object changed since it was read (409). Retryable. */
export class ConflictError extends RetryableError {
  constructor(what: string, cause: unknown) {
    super("Conflict", `${what}: the object changed since it was read; will retry`, { cause });
    this.name = "ConflictError";
  }
}

/**
 * A write the API server accepted but answered without what it wrote (`unkept`: the
 * annotations, finalizers or spec fields it lacks, or still has): a mutating admission
 * webhook or policy of the cluster changed it. What relies on the write stops there (a
 * create whose marker was not kept is not sent). Terminal and external: the cluster's
 * admission, not the object, must change; retried on the slow hold backoff.
 */
export class WriteNotKeptError extends TerminalError {
  constructor(what: string, unkept: string[]) {
    super(
      "WriteNotKept",
      `the ${what} was changed by the API server's admission: its answer does not show ${unkept.join(", ")} as written; a mutating admission webhook or policy of the cluster (kubectl get mutatingwebhookconfigurations; from Kubernetes 1.36 also mutatingadmissionpolicies) changes the operator's writes: exclude these from it`,
      { external: true },
    );
    this.name = "WriteNotKeptError";
  }
}

/** A reconcile ran past its deadline and was abandoned; its key is retried. */
export class ReconcileTimeoutError extends RetryableError {
  constructor(timeoutMs: number) {
    super(
      "ReconcileTimeout",
      `the reconcile took longer than ${timeoutMs} ms (reconcileTimeoutMs) and was abandoned; it is retried with backoff`,
    );
    this.name = "ReconcileTimeoutError";
  }
}
