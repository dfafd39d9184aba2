/**
 * A Kubernetes request that failed because the API server, or the proxy to it, could not
 * be reached or did not answer. KubeClient.request (kube.ts) throws it in place of the
 * connection's error, or of a front's 502, 503 or 504, and a watch ends with it alike
 * (listwatch.ts), so that what handles a request's failure tells an outage from an answer
 * without reading codes or messages: an Event's write that fails so is tried again and
 * said at debug only when dropped, an error policy's at debug (events.ts,
 * reconcile-failure.ts), as the cache's warnings (cache-sync.ts) and the failed
 * reconcile's own line say the outage.
 */
import { frontAnswerOf, isCut, statusCodeOf } from "./kube-errors.js";
import { isUnreachable, ProxyConnectError } from "./proxy-errors.js";

/** undici's codes of a request sent that got no answer, or no whole one, in time. */
const NO_ANSWER_CODES = new Set(["UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);

/**
 * The statuses with which a front (nginx, haproxy, a load balancer) says that the API
 * server behind it could not be reached or did not answer: Bad Gateway, Service
 * Unavailable, Gateway Timeout.
 */
const FRONT_NO_ANSWER = new Set([502, 503, 504]);

/**
 * The API server, or the proxy to it, was not reached or did not answer: a connection
 * refused, reset or closed (a TLS handshake cut included), a name not resolved, a connect
 * or TLS handshake timeout, a proxy that cannot be reached or refused the CONNECT, the
 * request timeout; a front's own 502, 503 or 504 (a KubeApiError, or a watch's
 * WatchStatusError, whose `front` is set: the API server's own 503, a Status, stays an
 * answer). Its message and `code` are its `cause`'s (the connection's error, the
 * front's answer and its status), so that it reads and is handled as that error is.
 */
export class KubeUnreachableError extends Error {
  readonly code: unknown;
  constructor(cause: Error) {
    super(cause.message, { cause });
    this.name = "KubeUnreachableError";
    const { code, statusCode } = cause as { code?: unknown; statusCode?: unknown };
    this.code = code ?? statusCode;
  }
}

/** Whether `err`, a request's error, is one of a {@link KubeUnreachableError}. */
function reachedNoAnswer(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return (
    err instanceof ProxyConnectError ||
    isUnreachable(err) ||
    isCut(err) ||
    NO_ANSWER_CODES.has(String(code)) ||
    (frontAnswerOf(err) !== undefined && FRONT_NO_ANSWER.has(statusCodeOf(err) ?? 0))
  );
}

/** A request's error `err` as a {@link KubeUnreachableError} when it is one, else itself. */
export function unreachableOr(err: unknown): unknown {
  return err instanceof Error && !(err instanceof KubeUnreachableError) && reachedNoAnswer(err)
    ? new KubeUnreachableError(err)
    : err;
}

/** True for a {@link KubeUnreachableError}, or an error that wraps one (its `cause`). */
export function isKubeUnreachable(err: unknown): boolean {
  const seen = new Set<unknown>();
  for (let e = err; typeof e === "object" && e !== null && !seen.has(e); ) {
    if (e instanceof KubeUnreachableError) return true;
    seen.add(e);
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
