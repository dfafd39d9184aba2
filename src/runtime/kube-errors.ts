/**
 * The errors of the Kubernetes client (kube.ts), how callers tell them apart, and which
 * answers it tries again.
 */
import { STATUS_CODES } from "node:http";
import { RetryableError } from "./errors.js";
import { parseBody } from "./resource.js";

/** How the API server words a write an admission webhook or policy refused. */
const ADMISSION_DENIAL =
  /admission webhook "[^"]*" denied the request|(Validating|Mutating)AdmissionPolicy '[^']*' with binding '[^']*' denied request/;

/**
 * A Kubernetes API answer other than 2xx. `audited`: it carries the Audit-Id header
 * every answer of the API server carries; one without it nor a Status body is a front's
 * own ({@link frontAnswer}).
 */
export class KubeApiError extends Error {
  /** HTTP status. */
  readonly code: number;
  /** `AdmissionDenied`, else the Status reason (`NotFound`, `Invalid`...) or `Http<code>`. */
  readonly reason: string;
  /** The parsed response body (usually a metav1.Status). */
  readonly body: unknown;
  /** What a front's own answer says ({@link frontAnswer}); undefined for the API server's. */
  readonly front: string | undefined;

  constructor(method: string, path: string, code: number, body: unknown, audited = true) {
    const status = (typeof body === "object" && body !== null ? body : {}) as {
      reason?: string;
      message?: string;
    };
    const front = audited ? undefined : frontAnswer(code, body);
    super(
      `${method} ${path}: ${front ?? `${code} ${status.message ?? String(body ?? "")}`}`.trim(),
    );
    this.name = "KubeApiError";
    this.code = code;
    this.reason = ADMISSION_DENIAL.test(status.message ?? "")
      ? "AdmissionDenied"
      : status.reason || `Http${code}`;
    this.body = body;
    this.front = front;
  }
}

/**
 * What an answer `code` without the API server's Audit-Id says when its `body` is not a
 * Kubernetes Status either: the answer of a proxy or gateway in front of the API server
 * (nginx's 502 page, a path it does not route, kubectl proxy refusing a Host), its text
 * short (an HTML page's title); undefined for a Status, which only the API server writes.
 */
function frontAnswer(code: number, body: unknown): string | undefined {
  const o = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
  if (o.kind === "Status") return undefined;
  const text =
    typeof o.message === "string"
      ? o.message
      : typeof body === "string"
        ? (/<title>([^<]*)<\/title>/i.exec(body)?.[1] ?? body.replace(/<[^>]*>/g, " "))
        : body === undefined
          ? ""
          : JSON.stringify(body);
  const said = text.replace(/\s+/g, " ").trim().slice(0, 200);
  const path =
    code === 404 || code < 300 ? " (is the path of the kubeconfig's server URL right?)" : "";
  return `${code} ${STATUS_CODES[code] ?? ""} from a proxy in front of the API server, not from the API server${said ? `: "${said}"` : ""}${path}`;
}

/** HTTP status of a Kubernetes client error (ours, a watch's, or client-node's ApiException). */
export function statusCodeOf(err: unknown): number | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const e = err as { code?: unknown; statusCode?: unknown };
  if (typeof e.code === "number") return e.code;
  if (typeof e.statusCode === "number") return e.statusCode;
  return undefined;
}

/** True for 404 Not Found. */
export const isNotFound = (err: unknown): boolean => statusCodeOf(err) === 404;
/** True for 409 Conflict (a stale resourceVersion) or AlreadyExists. */
export const isConflict = (err: unknown): boolean => statusCodeOf(err) === 409;

/** A watch line that is not an event: the watch ends with it and its watcher lists again. */
export class WatchDecodeError extends Error {
  /** The informer relists on this error rather than resuming at its resourceVersion. */
  readonly relist = true;
  constructor(path: string, line: string, cause?: unknown) {
    super(`watch of ${path} sent a line that is not an event: ${line.slice(0, 200)}`, {
      cause,
    });
    this.name = "WatchDecodeError";
  }
}

/**
 * An error of a connection the other side closed or reset (undici's socket error,
 * ECONNRESET, EPIPE), or of a stream undici ended at an HTTP/2 GOAWAY: the streams past
 * its last one, and (undici 8) any stream of an earlier session of the same connection,
 * a watch included, when a later one gets the GOAWAY (kube-connection.ts).
 */
export function isConnectionReset(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === "UND_ERR_INFO") return /"GOAWAY"/.test(String((err as Error).message));
  return code === "UND_ERR_SOCKET" || code === "ECONNRESET" || code === "EPIPE";
}

/** What a watch a front held back says to do. */
export const HELD_HINT =
  "a proxy in front of the API server may be holding streamed answers (nginx: proxy_buffering off)";

/**
 * What a watch that sent nothing for `silentMs`, while a list after it showed changes,
 * says: the API server's watch cache sends a bookmark about every minute, so a front
 * held it back.
 */
export function silentWatchHeld(silentMs: number): string {
  const s = Math.round(silentMs / 1000);
  return `the watch sent nothing for ${s} s, not even a bookmark, while objects changed: ${HELD_HINT}`;
}

/** A watch unanswered this long is held by a front: the API server answers one at once. */
export const WATCH_HELD_MS = 1_000;

/**
 * A watch that got no answer for {@link WATCH_HELD_MS} or more, then was cut or timed
 * out: a front holds streamed answers back (nginx's `proxy_buffering`). Its watcher
 * lists again, as client-go's reflector does after a failed watch, so that changes
 * come late instead of never.
 */
export class WatchNotAnsweredError extends Error {
  /** The informer relists on this error rather than resuming at its resourceVersion. */
  readonly relist = true;
  constructor(path: string, waitedMs: number, cause: unknown) {
    // The cause's message follows in the logs (pino appends it).
    super(`watch of ${path} got no answer in ${Math.round(waitedMs / 1000)} s: ${HELD_HINT}`, {
      cause,
    });
    this.name = "WatchNotAnsweredError";
  }
}

/**
 * An answered watch cut in the middle of an event: a front that holds streamed answers
 * back (nginx's `proxy_buffering`) passes, when its timeout cuts the watch, only what
 * filled its buffers. The watch after it would start at the same resourceVersion and be
 * cut at the same place for ever; its watcher lists again instead.
 */
export class WatchCutMidEventError extends Error {
  /** The informer relists on this error rather than resuming at its resourceVersion. */
  readonly relist = true;
  constructor(path: string, unfinished: string, cause: unknown) {
    super(
      `watch of ${path} was cut ${Buffer.byteLength(unfinished)} bytes into an event: ${HELD_HINT}`,
      { cause },
    );
    this.name = "WatchCutMidEventError";
  }
}

/**
 * How an answered watch cut with `unfinished` text after its last whole event ends: null
 * (resumed, as client-go does) when the cut fell between events, else a
 * {@link WatchCutMidEventError}.
 */
export function cutWatchError(
  path: string,
  unfinished: string,
  cause: unknown,
): WatchCutMidEventError | null {
  return unfinished.trim() ? new WatchCutMidEventError(path, unfinished, cause) : null;
}

/**
 * A watch answered {@link WATCH_HELD_MS} or more after it was sent that ended less than
 * that after its answer: a front held the answer back (nginx 1.22 over HTTP/1.1 with
 * `proxy_buffering`: the headers and events) and let it through only when its timeout cut
 * it; the API server answers a watch at once. Its events came, that late: its informer
 * warns and lists again at once, not a failure of its watches. (Events alone held after
 * the answer cannot be told by their time from a cut just after an event.)
 */
export class WatchHeldError extends Error {
  /** The informer relists on this error rather than resuming at its resourceVersion. */
  readonly relist = true;
  constructor(path: string, heldMs: number, cause: unknown) {
    super(
      `watch of ${path} was held back ${Math.round(heldMs / 1000)} s by a front and let through only when it was cut: changes reach the operator that late (nginx: proxy_buffering off)`,
      { cause },
    );
    this.name = "WatchHeldError";
  }
}

/** When a watch was sent and when it was answered (0: not yet), by Date.now(). */
export interface WatchTimes {
  sent: number;
  answered: number;
}

/**
 * How an answered watch that ended now (`cause`: cut, else a clean end) with `unfinished`
 * text after its last whole event ends: {@link cutWatchError}'s for a cut inside an
 * event, else a {@link WatchHeldError} when it came held (see there), else null.
 */
export function answeredWatchEnd(
  path: string,
  times: WatchTimes,
  unfinished: string,
  cause?: unknown,
): Error | null {
  const cut = cause === undefined ? null : cutWatchError(path, unfinished, cause);
  const { sent, answered } = times;
  if (cut || answered - sent < WATCH_HELD_MS || Date.now() - answered >= WATCH_HELD_MS) {
    return cut;
  }
  return new WatchHeldError(path, answered - sent, cause);
}

/**
 * True for a connection, or over HTTP/2 a stream, that the other side closed or reset: a
 * front's timeout (nginx resets an HTTP/2 stream with INTERNAL_ERROR).
 */
export function isCut(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return isConnectionReset(err) || code === "ERR_HTTP2_STREAM_ERROR";
}

/** True for a request cut, or timed out, before its answer began after `waitedMs` (see {@link WatchNotAnsweredError}). */
export function isHeldAnswer(err: unknown, waitedMs: number): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return waitedMs >= WATCH_HELD_MS && (code === "UND_ERR_HEADERS_TIMEOUT" || isCut(err));
}

/**
 * An error of a watch answered with a status other than 200 (410: Gone); `audited` as
 * a {@link KubeApiError}'s.
 */
export class WatchStatusError extends Error {
  readonly statusCode: number;
  /** What a front's own answer says ({@link frontAnswer}); undefined for the API server's. */
  readonly front: string | undefined;
  constructor(status: number, text: string, audited = true) {
    const front = audited ? undefined : frontAnswer(status, parseBody(text));
    super(`watch answered ${front ?? `${status}: ${text.slice(0, 300)}`}`);
    this.name = "WatchStatusError";
    this.statusCode = status;
    this.front = front;
  }
}

/**
 * What a front's own answer failing `err`, or the error `err` wraps (a front's 502 is a
 * KubeUnreachableError's cause), says ({@link frontAnswer}), else undefined.
 */
export function frontAnswerOf(err: unknown): string | undefined {
  const answer = (e: unknown) =>
    e instanceof KubeApiError || e instanceof WatchStatusError ? e.front : undefined;
  return answer(err) ?? answer((err as { cause?: unknown } | null)?.cause);
}

/** A request made for a reconcile that was already abandoned; nothing was sent. */
export class ReconcileAbandonedError extends RetryableError {
  constructor(what: string) {
    super("ReconcileAbandoned", `${what} was not sent: its reconcile was abandoned`);
    this.name = "ReconcileAbandonedError";
  }
}

/** Tries after the first one of a request the server asked to retry (429, Retry-After): client-go's 10. */
export const MAX_RETRIES = 10;
/** The longest wait for one Retry-After. */
export const MAX_RETRY_WAIT_MS = 10_000;

/**
 * How long to wait before trying a request again after `answer`, or undefined when it
 * is not to be tried again: a 429 (Retry-After, else 1 s), a GET's 5xx with Retry-After
 * (client-go's `checkWait`), at most {@link MAX_RETRY_WAIT_MS}.
 */
export function retryWaitMs(
  method: string,
  answer: { status: number; retryAfter?: string | undefined },
): number | undefined {
  const { status } = answer;
  const seconds = answer.retryAfter !== undefined ? Number(answer.retryAfter.trim()) : Number.NaN;
  const given = Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
  if (status === 429) return Math.min(given ?? 1000, MAX_RETRY_WAIT_MS);
  if (status >= 500 && method === "GET" && given !== undefined) {
    return Math.min(given, MAX_RETRY_WAIT_MS);
  }
  return undefined;
}
