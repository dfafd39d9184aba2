/**
 * The errors the transport makes itself, beside the answers response.ts interprets:
 * no usable answer (network, timeout, a body past the limit), a redirect, a call whose
 * reconcile was abandoned, and the scrubbing of the key from any message.
 */
import {
  type ServiceError,
  ServiceMalformedResponseError,
  ServiceRedirectError,
  ServiceUnavailableError,
} from "./errors.js";
import { ResponseTooLargeError } from "./http-exchange.js";
import type { CallDescription } from "./response.js";

/** Network error codes that prove the request never reached the service. */
const NOT_SENT_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

/**
 * The error of an attempt that got no usable answer: a body past the size limit
 * (malformed), a timeout, or a network failure (`outcomeUnknown` unless the error
 * proves the request was never sent).
 */
export function networkError(
  call: CallDescription,
  err: unknown,
  limits: { timeoutMs: number; maxResponseBytes: number },
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
  const notSent = code !== undefined && NOT_SENT_CODES.has(code);
  const detail = code ?? (err instanceof Error ? err.message : String(err));
  return new ServiceUnavailableError(`${call.where} failed: network error (${detail})`, {
    endpoint: call.endpoint,
    code: undefined,
    outcomeUnknown: !call.idempotent && !notSent,
    cause: err,
  });
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
    `${call.where} answered with a redirect (HTTP ${status}) ${where}; the client follows no redirect, so the API key goes only to the configured service.baseUrl: set it to the address the service really answers on`,
    { endpoint: call.endpoint, code: status },
  );
}

/**
 * Removes the key from an error message, should any lower layer have echoed it. Keys
 * shorter than 8 characters are not real Open API keys and would mangle ordinary words.
 */
export function scrub(err: Error, key: string): void {
  if (key.length >= 8 && err.message.includes(key)) {
    err.message = err.message.split(key).join("[REDACTED]");
  }
}
