/**
 * Interpreting an HTTP answer of the service: the envelope `{status, message, data}`
 * decides (status 200 is the only success, even on HTTP 200), the HTTP status decides
 * when there is no envelope, and the payload is validated against the operation's
 * schema. Pure, so every mapping is tested without a server.
 */
import { z } from "zod";
import {
  endpointConfigKey,
  ServiceAuthError,
  type ServiceError,
  ServiceMalformedResponseError,
  ServiceNotFoundError,
  ServiceOperationMissingError,
  ServiceRefusedError,
  ServiceUnavailableError,
} from "./errors.js";
import { describeIssues, optionalString } from "./schemas/primitives.js";

/** Envelope status meaning success (for asynchronous operations: accepted). */
const ENVELOPE_OK = 200;

/** The envelope; `status` may arrive as a numeric string. */
const envelopeSchema = z.object({
  status: z.preprocess((v) => (typeof v === "string" && /^\d+$/.test(v) ? Number(v) : v), z.int()),
  message: optionalString,
  data: z.unknown(),
});

/** What came back over HTTP. */
export interface RawResponse {
  httpStatus: number;
  bodyText: string;
  /** The Retry-After header in ms, when the answer had one. */
  retryAfterMs?: number | undefined;
}

/** Which call the answer belongs to, for error messages and classification. */
export interface CallDescription {
  /** Endpoint name. */
  endpoint: string;
  /** `METHOD /path` as sent (no query, no headers). */
  where: string;
  /** Whether a repeat is harmless; decides `outcomeUnknown` of failures. */
  idempotent: boolean;
}

/** Human wording of a status code for messages. */
function statusText(code: number): string {
  const names: Record<number, string> = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    409: "Conflict",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
  };
  return names[code] ?? "";
}

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
    return new ServiceUnavailableError(`${call.where} failed with status ${code}${said}`, {
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
  const hint = fromEnvelope
    ? ""
    : " (HTTP answer without a service envelope: is the endpoint path right?)";
  return new ServiceRefusedError(
    `${call.where} was refused by the service with status ${code}${said}${hint}`,
    base,
  );
}

function malformed(
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
 * Returns the operation's data parsed by `dataSchema`, or throws the typed error:
 * an envelope status other than 200 by its status; no envelope by the HTTP status
 * (a 2xx without an envelope is malformed); a payload failing the schema is malformed
 * with the failing field in the message.
 */
export function interpretResponse<T>(
  call: CallDescription,
  raw: RawResponse,
  dataSchema: z.ZodType<T>,
): T {
  const httpOk = raw.httpStatus >= 200 && raw.httpStatus < 300;
  let json: unknown;
  let parsedJson = true;
  try {
    json = JSON.parse(raw.bodyText);
  } catch {
    parsedJson = false;
  }
  const envelope = parsedJson ? envelopeSchema.safeParse(json) : undefined;
  if (!envelope?.success) {
    if (!httpOk) throw errorForStatus(call, raw.httpStatus, undefined, false, raw.retryAfterMs);
    throw malformed(
      call,
      parsedJson
        ? "the body is not a service envelope (no integer status)"
        : "the body is not JSON",
      raw.httpStatus,
    );
  }
  const { status, message, data } = envelope.data;
  if (status !== ENVELOPE_OK) throw errorForStatus(call, status, message, true, raw.retryAfterMs);
  if (!httpOk) throw errorForStatus(call, raw.httpStatus, message, false, raw.retryAfterMs);
  const parsed = dataSchema.safeParse(data);
  if (!parsed.success) throw malformed(call, describeIssues(parsed.error), status, true);
  return parsed.data;
}
