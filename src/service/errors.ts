/**
 * Typed errors of the service API client. Every failure of a call is one of these, so a
 * caller decides by class or by `retryable` alone: the controller runtime treats
 * `retryable === false` as terminal (wait for a spec or Secret change) and anything else
 * as a reason to back off and try again.
 *
 * Messages never contain the API key or the Authorization header: they are built from
 * the endpoint name, the method and path, the status codes and the service's message.
 */

/** What every service error carries besides its message. */
export interface ServiceErrorDetails {
  /** Whether trying the same call again later can succeed. */
  retryable: boolean;
  /** Envelope status when there was an envelope, else the HTTP status; undefined without a response. */
  code: number | undefined;
  /** Endpoint name from the endpoint table (e.g. `getNas`). */
  endpoint: string;
  /** The service's own `message`, when it sent one. */
  serviceMessage?: string;
  /**
   * True when a non-idempotent request (a create, a scale) may have taken effect even
   * though the call failed: a timeout, a dropped connection, a 5xx or an unreadable
   * answer after the request was sent. Callers must look the resource up before
   * sending it again.
   */
  outcomeUnknown?: boolean;
  /** How long the service asked to wait before the next attempt (Retry-After), in ms. */
  retryAfterMs?: number;
  /**
   * Whether the answer was a service envelope (even an error one): the operation exists
   * at that path. False without an answer, or for a bare HTTP error or unreadable body.
   */
  enveloped?: boolean;
  /** The underlying error, for logs. */
  cause?: unknown;
}

/** Base class of every error thrown by `ServiceClient`. */
export class ServiceError extends Error {
  readonly retryable: boolean;
  readonly code: number | undefined;
  readonly endpoint: string;
  readonly serviceMessage?: string;
  readonly outcomeUnknown: boolean;
  readonly retryAfterMs?: number;
  /** See {@link ServiceErrorDetails.enveloped}. */
  readonly enveloped: boolean;

  constructor(message: string, details: ServiceErrorDetails) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.retryable = details.retryable;
    this.code = details.code;
    this.endpoint = details.endpoint;
    if (details.serviceMessage !== undefined) this.serviceMessage = details.serviceMessage;
    this.outcomeUnknown = details.outcomeUnknown ?? false;
    if (details.retryAfterMs !== undefined) this.retryAfterMs = details.retryAfterMs;
    this.enveloped = details.enveloped ?? false;
  }
}

/**
 * The API key was refused (envelope or HTTP 403, or 401), or could not be read.
 * Terminal, but `external`: the controllers retry it on the slow hold backoff and at
 * once when the key changes, since the service may accept the same key again (a burst
 * of 403s) without any change of the object. Condition reason `ApiKeyRefused`.
 */
export class ServiceAuthError extends ServiceError {
  /** The condition reason of every object this error holds. */
  readonly reason = "ApiKeyRefused";
  /** The hold lies with the service or the key, not the object (see runtime isExternalHold). */
  readonly external = true;

  constructor(message: string, details: Omit<ServiceErrorDetails, "retryable">) {
    super(message, { ...details, retryable: false });
  }
}

/**
 * The service refused the request: a non-200 envelope status that is not 5xx, 429 or
 * 403 (for example a validation failure). Terminal: the same request will be refused
 * again. The message carries the service's message.
 */
export class ServiceRefusedError extends ServiceError {
  constructor(message: string, details: Omit<ServiceErrorDetails, "retryable">) {
    super(message, { ...details, retryable: false });
  }
}

/**
 * The service answered with envelope status 404: the addressed resource does not exist
 * (anymore). A refusal, so terminal; observers use it to notice a resource deleted out
 * of band, and deletes treat it as done. A bare HTTP 404 without an envelope is NOT
 * this error (it usually means a wrong endpoint path) but a `ServiceRefusedError`.
 */
export class ServiceNotFoundError extends ServiceRefusedError {}

/**
 * The service answered with a redirect (3xx). None is followed, so that the key and the
 * body never go to another origin; terminal, because the configured base URL is wrong
 * (or the answer hostile) until someone changes it. The message names the Location.
 * `external`: the object is not at fault, and what must change (the service, or the
 * base URL of a ServiceConnection, which is no change of the objects that use it) is
 * noticed on the slow hold backoff, as a refused key is.
 */
export class ServiceRedirectError extends ServiceRefusedError {
  /** Condition and Event reason. */
  readonly reason = "ServiceRedirected";
  /** The hold lies with the service or the configuration, not the object (see runtime isExternalHold). */
  readonly external = true;
}

/**
 * The service refused a read (a GET answered with a refusal other than 401, 403 or an
 * envelope 404). A read sends nothing of the spec but an id, so the object is not at
 * fault and the same read may be answered later (a passing refusal of a gateway or the
 * service): terminal, but `external`, so the object is held and read again on the slow
 * hold backoff instead of until someone edits it. Condition reason `ReadRefused`.
 */
export class ServiceReadRefusedError extends ServiceRefusedError {
  /** Condition and Event reason. */
  readonly reason = "ReadRefused";
  /** The hold lies with the service, not the object (see runtime isExternalHold). */
  readonly external = true;
}

/**
 * The service has no operation at the endpoint's path: a bare HTTP 404 or 405 without
 * a service envelope (a router's answer, not the service's). Every assumed path
 * (docs/service-assumptions.md) can end here when the real service differs. Terminal,
 * but `external`: retried on the slow hold backoff, since the path can come back; the
 * message names the operation and the config key that sets its path. Condition
 * reason `OperationMissingTerminal`.
 */
export class ServiceOperationMissingError extends ServiceRefusedError {
  /** The condition reason of every object this error holds. */
  readonly reason = "OperationMissingTerminal";
  /** The hold lies with the service, not the object (see runtime isExternalHold). */
  readonly external = true;
}

/**
 * A request refused as too large by something in front of the service: a bare HTTP 413,
 * 414 or 431 without a service envelope (a proxy's or gateway's size limit, e.g. nginx's
 * client_max_body_size), so nothing reached the service. Terminal, but `external`: the
 * front's limit must change (or the spec shrink), and a raised limit is noticed on the
 * slow hold backoff without an edit of the object. Condition reason `RequestTooLarge`.
 */
export class ServiceRequestTooLargeError extends ServiceRefusedError {
  /** Condition and Event reason. */
  readonly reason = "RequestTooLarge";
  /** The hold lies with the front of the service, not the object (see runtime isExternalHold). */
  readonly external = true;
}

/**
 * Whether `err` is the service's own refusal of what was asked (an envelope status such
 * as 400 or 409): not a 404, an operation the service lacks, a redirect or a read refused.
 */
export function isServiceRefusal(err: unknown): err is ServiceRefusedError {
  return (
    err instanceof ServiceRefusedError &&
    !(err instanceof ServiceNotFoundError) &&
    !("external" in err)
  );
}

/**
 * Whether the service answered a call with a failure that says something of the
 * resource: a refusal of its own ({@link isServiceRefusal}) or a 5xx (which may follow
 * the call's effect); not a 404, a 429 or a failure to reach it.
 */
export function isServiceFailureAnswer(err: unknown): err is ServiceError {
  return (
    isServiceRefusal(err) || (err instanceof ServiceUnavailableError && (err.code ?? 0) >= 500)
  );
}

/** The config key that sets (or disables) the path of endpoint `name`. */
export function endpointConfigKey(name: string): string {
  return `service.endpoints.${name}`;
}

/** 5xx, 429, a network failure or a timeout: back off and retry. */
export class ServiceUnavailableError extends ServiceError {
  constructor(message: string, details: Omit<ServiceErrorDetails, "retryable">) {
    super(message, { ...details, retryable: true });
  }
}

/**
 * The call was not sent: the client-side rate limit of its connection is saturated
 * (more than `rateLimitMaxWaitMs` of callers ahead). Retryable, and known not sent, so
 * the reconcile gives its worker back and is requeued for when the limit has room
 * (`requeueAfterMs`) instead of holding it while one account's queue drains (docs/controllers.md, ServiceConnection).
 */
export class ServiceThrottledError extends ServiceError {
  /** Condition and Event reason. */
  readonly reason = "ConnectionThrottled";
  /** About when the rate limit has room for the call (the runtime requeues then). */
  readonly requeueAfterMs: number;

  constructor(
    message: string,
    details: Omit<ServiceErrorDetails, "retryable">,
    requeueAfterMs: number,
  ) {
    super(message, { ...details, retryable: true, outcomeUnknown: false });
    this.requeueAfterMs = requeueAfterMs;
  }
}

/**
 * The answer was not JSON, not an envelope, or its data failed the schema; the message
 * names the field that failed. Retryable: a proxy hiccup or a partial body is the
 * common cause, and a persistent mismatch shows in the condition message.
 */
export class ServiceMalformedResponseError extends ServiceError {
  /** Condition and Event reason. */
  readonly reason = "MalformedServiceAnswer";

  constructor(message: string, details: Omit<ServiceErrorDetails, "retryable">) {
    super(message, { ...details, retryable: true });
  }
}

/**
 * A subscription result came as an envelope, but its data has a shape or a state the
 * operator cannot map (an integer `status`, other field names). Terminal, but
 * `external`: retried on the slow hold backoff; the message names the config key
 * (`service.subscriptionResult`) that maps it. Condition reason
 * `SubscriptionResultUnknownTerminal`.
 */
export class ServiceResultShapeError extends ServiceError {
  /** The condition reason of every object this error holds. */
  readonly reason = "SubscriptionResultUnknownTerminal";
  /** The hold lies with the service's answers, not the object (see runtime isExternalHold). */
  readonly external = true;

  constructor(message: string, details: Omit<ServiceErrorDetails, "retryable">) {
    super(message, { ...details, retryable: false });
  }
}

/**
 * The request was invalid before it was sent (for example an unknown training
 * framework or a capacity that is not a positive integer). Terminal.
 */
export class ServiceInvalidRequestError extends ServiceError {
  constructor(message: string, details: Omit<ServiceErrorDetails, "retryable" | "code">) {
    super(message, { ...details, code: undefined, retryable: false });
  }
}

/**
 * An id that was to become part of a request path is not a well-formed service id
 * (`SERVICE_ID_PATTERN`): for example `..` from an annotation or a hostile answer.
 * Nothing was sent. Terminal until the id (annotation or spec) changes.
 */
export class ServiceInvalidIdError extends ServiceInvalidRequestError {
  /** Condition and Event reason. */
  readonly reason = "InvalidRemoteId";
}

/**
 * The operation is disabled (`null` in the endpoint overrides) or has no configured
 * path (deletes, by default). Terminal; a controller reports "operation not configured"
 * and, for a Delete policy, falls back to orphaning.
 */
export class EndpointDisabledError extends ServiceError {
  constructor(endpoint: string) {
    super(
      `the service operation ${endpoint} is not configured (disabled in the endpoint table); set a path for it with ${endpointConfigKey(endpoint)} in the operator configuration to enable it`,
      { endpoint, code: undefined, retryable: false },
    );
  }
}

/** True for an error of this client whose retry cannot succeed (auth, refusal, disabled). */
export function isTerminalServiceError(err: unknown): boolean {
  return err instanceof ServiceError && !err.retryable;
}
