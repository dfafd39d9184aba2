/**
 * The error a failed service call becomes (transport.ts): an answer's failed status, a
 * malformed answer, no usable answer (network, timeout, a body past the limit), a
 * redirect, a call whose reconcile was abandoned; and the scrubbing of the key from any
 * message.
 */

import { CONNECT_FAILED_CODES, proxyAuthAnswer } from "../runtime/proxy-errors.js";
import { CERTIFICATE_REFUSED_CODES } from "./certificate-errors.js";
import {
  endpointConfigKey,
  ServiceAuthError,
  ServiceError,
  ServiceMalformedResponseError,
  ServiceNotFoundError,
  ServiceOperationMissingError,
  ServiceReadRefusedError,
  ServiceRedirectError,
  ServiceRefusedError,
  ServiceRequestTooLargeError,
  ServiceUnavailableError,
} from "./errors.js";
import { ResponseTooLargeError } from "./http-exchange.js";
import { type NamedProxy, proxyFailure } from "./service-proxy.js";

/** Which call the answer belongs to, for error messages and classification. */
export interface CallDescription {
  /** Endpoint name. */
  endpoint: string;
  /** HTTP method: a refused GET is a {@link ServiceReadRefusedError}. */
  method: string;
  /** `METHOD /path` as sent (no query, no headers). */
  where: string;
  /** Whether a repeat is harmless; decides `outcomeUnknown` of failures. */
  idempotent: boolean;
  /** Length of the request body in bytes, when it has one (named by a 413's message). */
  bodyBytes?: number;
}

/** Human wording of a status code for messages. */
function statusText(code: number): string {
  const names: Record<number, string> = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    409: "Conflict",
    413: "Content Too Large",
    414: "URI Too Long",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
  };
  return names[code] ?? "";
}

/** What a front's own 502 or 504 (no service envelope) says of the service behind it. */
const FRONT_FAILURES: Record<number, string> = {
  502: "it could not reach the service (is the address it forwards to right?)",
  504: "the service did not answer it within the proxy's timeout",
};

/**
 * The error for a failed status `code` (an envelope status, or the HTTP status when
 * `fromEnvelope` is false). Only an envelope 404 means "not found": a bare HTTP 404
 * usually means a wrong path, and must not make a controller think a resource is gone.
 */
export function errorForStatus(
  call: CallDescription,
  code: number,
  serviceMessage: string | undefined,
  fromEnvelope: boolean,
  retryAfterMs?: number,
): ServiceError {
  const said = serviceMessage
    ? `: ${serviceMessage}`
    : statusText(code)
      ? `: ${statusText(code)}`
      : "";
  const base = {
    endpoint: call.endpoint,
    code,
    enveloped: fromEnvelope,
    ...(serviceMessage ? { serviceMessage } : {}),
  };
  if (code === 401 || code === 403) {
    return new ServiceAuthError(
      `${call.where} was refused with status ${code}${said} (the API key is missing, wrong or lacks permission)`,
      base,
    );
  }
  if (code === 429 || code >= 500) {
    const front = fromEnvelope ? undefined : FRONT_FAILURES[code];
    const from = front
      ? ` from a proxy or gateway in front of the service, not from the service: ${front}`
      : "";
    return new ServiceUnavailableError(`${call.where} failed with status ${code}${said}${from}`, {
      ...base,
      // A 429 is refused before any work is done; a 5xx may come after the work.
      outcomeUnknown: !call.idempotent && code !== 429,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    });
  }
  if (code === 404 && fromEnvelope) {
    return new ServiceNotFoundError(`${call.where}: not found (status 404)${said}`, base);
  }
  if ((code === 404 || code === 405) && !fromEnvelope) {
    return new ServiceOperationMissingError(
      `${call.where} answered HTTP ${code} without a service envelope: the service has no operation ${call.endpoint} at this path (is the endpoint path right?); set its path with ${endpointConfigKey(call.endpoint)} in the operator configuration`,
      base,
    );
  }
  if (!fromEnvelope && (code === 413 || code === 414 || code === 431)) {
    const size = call.bodyBytes === undefined ? "" : ` of ${call.bodyBytes} bytes`;
    const part = {
      413: `request body${size} (e.g. nginx client_max_body_size)`,
      414: "URL",
      431: "request headers",
    }[code];
    return new ServiceRequestTooLargeError(
      `${call.where} was refused with HTTP ${code}${said} without a service envelope: a proxy or gateway in front of the service limits the size of the ${part}; raise its limit`,
      base,
    );
  }
  const hint = fromEnvelope
    ? ""
    : " (HTTP answer without a service envelope: is the endpoint path right?)";
  const text = `${call.where} was refused by the service with status ${code}${said}${hint}`;
  // A read carries nothing of the spec to correct: the far side must change, not the
  // object. When it is read again is said by whoever catches it (runtime/errors.ts).
  return call.method === "GET"
    ? new ServiceReadRefusedError(text, base)
    : new ServiceRefusedError(text, base);
}

/** A malformed answer: `what` says what is wrong with it. */
export function malformed(
  call: CallDescription,
  what: string,
  code: number,
  enveloped = false,
): ServiceMalformedResponseError {
  return new ServiceMalformedResponseError(`${call.where}: malformed response: ${what}`, {
    endpoint: call.endpoint,
    code,
    enveloped,
    outcomeUnknown: !call.idempotent,
  });
}

/**
 * Network error codes that prove the request never reached the service; ERR_PROXY_TUNNEL:
 * the proxy refused the tunnel (e.g. 407) or closed it before it was open, or answered
 * 407 a request sent to it whole (proxyAuthAnswer); a certificate
 * refused in the TLS handshake, before the request.
 */
const NOT_SENT_CODES = new Set<string>([
  ...CONNECT_FAILED_CODES,
  "ERR_PROXY_TUNNEL",
  ...CERTIFICATE_REFUSED_CODES,
]);

/**
 * Whether the network error `err` proves that its request never left (see
 * {@link NOT_SENT_CODES}): the service's calls and the object storage's alike.
 */
export function neverSent(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && NOT_SENT_CODES.has(code);
}

/** What a failed attempt's error names: the limits it broke, and the proxy it went to. */
export interface AttemptLimits {
  timeoutMs: number;
  maxResponseBytes: number;
  /** The proxy every connection goes to; undefined when direct. */
  proxy?: NamedProxy | undefined;
}

/**
 * The error of an attempt that got no usable answer: a body past the size limit
 * (malformed), a timeout, or a network failure (`outcomeUnknown` unless the error
 * proves the request was never sent). Through a proxy every connection is the proxy's,
 * so a connection that failed says so as the proxy's {@link proxyFailure}.
 */
export function networkError(
  call: CallDescription,
  err: unknown,
  limits: AttemptLimits,
): ServiceError {
  const name = err instanceof Error ? err.name : "";
  if (err instanceof ResponseTooLargeError) {
    // The body was cut off at the limit and its stream destroyed: nothing more is read.
    return new ServiceMalformedResponseError(
      `${call.where}: malformed response: the body is longer than the limit of ${limits.maxResponseBytes} bytes (service.maxResponseBytes)`,
      { endpoint: call.endpoint, code: undefined, outcomeUnknown: !call.idempotent },
    );
  }
  if (name === "AbortError" || name === "TimeoutError") {
    return new ServiceUnavailableError(`${call.where} timed out after ${limits.timeoutMs} ms`, {
      endpoint: call.endpoint,
      code: undefined,
      outcomeUnknown: !call.idempotent,
      cause: err,
    });
  }
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const message = err instanceof Error ? err.message : String(err);
  const proxied = proxyFailure(limits.proxy, err);
  const detail = proxied?.message ?? code ?? message;
  return new ServiceUnavailableError(`${call.where} failed: network error (${detail})`, {
    endpoint: call.endpoint,
    code: undefined,
    outcomeUnknown: !call.idempotent && !neverSent(err),
    cause: proxied ?? err,
  });
}

/**
 * The error of an exchange that threw: a ServiceError as it is; one stopped before it
 * was sent (`NotSentError`, http-exchange.ts's `mayCall`) or aborted by the caller's
 * signal is abandoned; anything else is a {@link networkError}.
 */
export function exchangeError(
  call: CallDescription & { signal?: AbortSignal | undefined },
  err: unknown,
  limits: AttemptLimits,
): ServiceError {
  if (err instanceof ServiceError) return err;
  if (err instanceof Error && err.name === "NotSentError") return abandoned(call);
  return call.signal?.aborted ? abandoned(call, err) : networkError(call, err, limits);
}

/**
 * The error of a call whose reconcile was abandoned: retryable (the key is retried),
 * with an unknown outcome when a request that is not idempotent may have been sent.
 */
export function abandoned(call: CallDescription, cause?: unknown): ServiceUnavailableError {
  return new ServiceUnavailableError(`${call.where} was stopped: its reconcile was abandoned`, {
    endpoint: call.endpoint,
    code: undefined,
    outcomeUnknown: cause !== undefined && !call.idempotent,
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * The error of an answer that is no answer of the service: a redirect
 * ({@link redirectError}), or a 407 of the `proxy` an http:// URL was sent to whole
 * (its user and password refused: nothing went further, see {@link networkError}).
 */
export function notServiceAnswer(
  call: CallDescription,
  answer: { httpStatus: number; location: string | null },
  proxy: NamedProxy | undefined,
): Error | undefined {
  const status = answer.httpStatus;
  if (status >= 300 && status < 400) return redirectError(call, status, answer.location);
  return status === 407 && proxy ? proxyAuthAnswer() : undefined;
}

/** Longest Location quoted in an error message. */
const MAX_QUOTED_LOCATION = 200;

/** The error of a 3xx answer: it names the Location and says that none is followed. */
export function redirectError(
  call: CallDescription,
  status: number,
  location: string | null,
): ServiceRedirectError {
  const where =
    location === null
      ? "without a Location"
      : `to ${JSON.stringify(location.slice(0, MAX_QUOTED_LOCATION))}`;
  return new ServiceRedirectError(
    `${call.where} answered with a redirect (HTTP ${status}) ${where}; the client follows no redirect, so the API key goes only to the configured base URL: set service.baseUrl (or, for an object of a ServiceConnection, its spec.baseUrl) to the address the service really answers on`,
    { endpoint: call.endpoint, code: status },
  );
}

/**
 * Removes the key from an error's message and the service's own message it carries,
 * should the service or a lower layer have echoed it. Keys shorter than 8 characters are
 * not real Open API keys and would mangle ordinary words.
 */
export function scrub(err: Error, key: string): void {
  if (key.length < 8) return;
  const blank = (text: string) => text.split(key).join("[REDACTED]");
  if (err.message.includes(key)) err.message = blank(err.message);
  const said = (err as { serviceMessage?: unknown }).serviceMessage;
  if (typeof said === "string" && said.includes(key)) {
    Object.assign(err, { serviceMessage: blank(said) });
  }
}
