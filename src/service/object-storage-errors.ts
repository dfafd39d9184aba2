/**
 * The object storage's (S3) failures as service errors (errors.ts), so the managed loop
 * classifies them as it does the service API's: retryable (5xx, SlowDown, network,
 * timeouts) or terminal (refusals), a create whose outcome is unknown, a 404.
 *
 * Messages are built from the operation, the bucket, the S3 error code and the
 * server's message; never from a request, so no credential can reach them (SigV4
 * never sends the secret key; the access key id travels only in headers).
 */
import type { S3Client } from "@aws-sdk/client-s3";
import { proxyAuthAnswer } from "../runtime/proxy-errors.js";
import {
  ServiceError,
  ServiceNotFoundError,
  ServiceRefusedError,
  ServiceUnavailableError,
} from "./errors.js";
import {
  credentialsHint,
  noteCredentials,
  refusesCredentials,
} from "./object-storage-credentials.js";
import { answeredRegion, regionError } from "./object-storage-region.js";
import { type NamedProxy, proxyFailure } from "./service-proxy.js";
import { neverSent } from "./transport-errors.js";

/** What the AWS SDK's errors carry (ServiceException and its subclasses). */
interface SdkErrorShape {
  name?: string;
  message?: string;
  Code?: string;
  $fault?: "client" | "server";
  $metadata?: { httpStatusCode?: number };
}

/**
 * The server does not implement an S3 operation (answer `NotImplemented` or HTTP 501),
 * e.g. CORS on a server without it. Terminal: the same request is refused again; the
 * Bucket reports it as a condition naming the feature.
 */
export class ObjectStorageNotImplementedError extends ServiceRefusedError {
  /** Condition reason. */
  readonly reason = "FeatureNotImplemented";
}

/**
 * The object storage refused the credentials (InvalidAccessKeyId, SignatureDoesNotMatch,
 * 401): terminal, but external (retried on the slow hold backoff, as a refused API key
 * is), since a rotated Secret or the server can fix it without a change of the object.
 */
export class ObjectStorageCredentialsError extends ServiceRefusedError {
  /** Condition reason. */
  readonly reason = "S3CredentialsRefused";
  /** The hold lies with the credentials, not the object (see runtime isExternalHold). */
  readonly external = true;
}

/**
 * The object storage answered AccessDenied: the credentials lack the permission of
 * the call (the message names the action to grant). Terminal, but external, as a
 * refused key pair is: a policy changed on the server fixes it without a change of
 * the object.
 */
export class ObjectStorageAccessDeniedError extends ServiceRefusedError {
  /** Condition reason. */
  readonly reason = "S3AccessDenied";
  /** The hold lies with the credentials' policy, not the object. */
  readonly external = true;
}

/** The IAM action of each S3 operation whose action is not `s3:` and its name. */
const ACTIONS: Readonly<Record<string, string>> = {
  HeadBucket: "s3:ListBucket",
  ListBuckets: "s3:ListAllMyBuckets",
  ListObjectVersions: "s3:ListBucketVersions",
  DeleteObjects: "s3:DeleteObject and s3:DeleteObjectVersion",
  GetBucketLifecycleConfiguration: "s3:GetLifecycleConfiguration",
  PutBucketLifecycleConfiguration: "s3:PutLifecycleConfiguration",
  DeleteBucketLifecycle: "s3:PutLifecycleConfiguration",
  DeleteBucketTagging: "s3:PutBucketTagging",
  DeleteBucketCors: "s3:PutBucketCors",
};

/** What to grant for an AccessDenied of `operation` on `bucket` ("*": every bucket). */
export function accessHint(operation: string, bucket: string): string {
  const action = ACTIONS[operation] ?? `s3:${operation}`;
  const where = bucket === "*" ? "" : ` on bucket ${bucket}`;
  return `the S3 credentials need ${action}${where}: grant ${action.includes(" and ") ? "them" : "it"} in their policy, and check that no bucket policy denies it`;
}

/** S3 error codes that say "try again later". */
const RETRYABLE_CODES = new Set([
  "SlowDown",
  "ServiceUnavailable",
  "InternalError",
  "RequestTimeout",
  "RequestTimeTooSkewed",
  "OperationAborted",
  "XMinioServerNotInitialized",
]);

/** The S3 error code of `err` (its name for the SDK's modelled errors), if any. */
export function s3ErrorCode(err: unknown): string | undefined {
  const e = err as SdkErrorShape | undefined;
  if (!e || typeof e !== "object") return undefined;
  return e.Code ?? (e.$metadata ? e.name : undefined);
}

/** The HTTP status of the answer `err` came from; undefined without an answer. */
export function s3HttpStatus(err: unknown): number | undefined {
  return (err as SdkErrorShape | undefined)?.$metadata?.httpStatusCode;
}

/**
 * Converts an SDK failure of `operation` on `bucket` into a {@link ServiceError}.
 * `mutating`: the call changes state, so a failure without a clear refusal (no answer,
 * a 5xx) may have taken effect (`outcomeUnknown`).
 */
export function objectStorageError(
  operation: string,
  bucket: string,
  err: unknown,
  mutating = false,
): ServiceError {
  if (err instanceof ServiceError) {
    // A call stopped (its reconcile abandoned) after an attempt that may have taken effect.
    if (!mutating || err.outcomeUnknown || !followsReachedAttempt(err)) return err;
    return new ServiceUnavailableError(
      `${err.message}, after an earlier attempt that may have reached the object storage`,
      { endpoint: err.endpoint, code: undefined, outcomeUnknown: true, cause: err },
    );
  }
  const code = s3ErrorCode(err);
  const status = s3HttpStatus(err);
  const serverMessage = (err as SdkErrorShape | undefined)?.message ?? String(err);
  const endpoint = `s3:${operation}`;
  const what = bucket === "*" ? `S3 ${operation}` : `S3 ${operation} of bucket ${bucket}`;
  const details = {
    code: status,
    endpoint,
    serviceMessage: serverMessage,
    cause: err,
  };
  if (status === undefined) {
    return new ServiceUnavailableError(`${what}: no answer (${serverMessage})`, {
      ...details,
      // As the service's calls: a connection never opened (to the proxy, too) sent nothing.
      outcomeUnknown: mutating && !neverSent(err),
    });
  }
  const text = `${what}: ${code ?? `HTTP ${status}`}: ${serverMessage}`;
  if (code === "NotImplemented" || status === 501) {
    return new ObjectStorageNotImplementedError(text, details);
  }
  // gofakes3 runs a PUT of a bucket feature it lacks as a CreateBucket.
  if (operation !== "CreateBucket" && code?.startsWith("BucketAlready")) {
    return new ObjectStorageNotImplementedError(
      `${what}: ${code}: the object storage took it for a CreateBucket (it does not implement ${operation})`,
      details,
    );
  }
  if (refusesCredentials(status, code)) {
    return new ObjectStorageCredentialsError(`${text}${credentialsHint(err, code)}`, details);
  }
  const region = answeredRegion(err, status, code);
  if (region) return regionError(what, region, details);
  if (code === "AccessDenied") {
    return new ObjectStorageAccessDeniedError(
      `${text} (${accessHint(operation, bucket)})`,
      details,
    );
  }
  if (code === "NoSuchBucket" || (status === 404 && code === "NotFound")) {
    return new ServiceNotFoundError(text, details);
  }
  if (status >= 500 || status === 429 || (code && RETRYABLE_CODES.has(code))) {
    return new ServiceUnavailableError(text, { ...details, outcomeUnknown: mutating });
  }
  return new ServiceRefusedError(text, details);
}

/** The calls one of whose attempts may have reached the storage (see {@link attemptsTold}). */
const reached = new WeakSet<object>();
/** The failures of an attempt that followed one that may have reached the storage. */
const afterReached = new WeakSet<object>();

/**
 * Whether the failure `err` of a call came after an earlier attempt of it (the SDK
 * retries a connection reset or a 5xx) that may have reached the storage and taken
 * effect: a CreateBucket answered BucketAlreadyOwnedByYou may have met its own bucket.
 */
export function followsReachedAttempt(err: unknown): boolean {
  return typeof err === "object" && err !== null && afterReached.has(err);
}

/**
 * Makes the failure of each call of `s3` say what its attempts tell: one none of whose
 * attempts was sent keeps the code that proves it (ECONNREFUSED, ERR_PROXY_TUNNEL:
 * {@link objectStorageError} then knows a create did not happen), naming the `proxy` it
 * could not reach; one whose last attempt was not sent but an earlier one may have been
 * does not; see also {@link followsReachedAttempt}. A refusal of the credentials names
 * their `source` (object-storage-credentials.ts) and is told to `refused`, when given.
 */
export function attemptsTold(
  s3: S3Client,
  proxy: NamedProxy | undefined,
  source?: string,
  refused?: () => void,
): void {
  s3.middlewareStack.add(
    (next) => (args) =>
      next(args).catch((err: unknown) => {
        // A 407 is the proxy's own answer (an http:// endpoint's requests go to it whole).
        const refused = proxy && s3HttpStatus(err) === 407 ? proxyAuthAnswer() : err;
        const named = proxyFailure(proxy, refused) ?? err;
        if (!followsReachedAttempt(err) || !neverSent(err)) throw named;
        const said = named instanceof Error ? named.message : String(named);
        throw new Error(
          `${said}, after an earlier attempt that may have reached the object storage`,
          { cause: named },
        );
      }),
    { step: "initialize", name: "aidcAttemptsTold" },
  );
  // Inside the SDK's retries: each attempt that failed without proof that it was not sent.
  s3.middlewareStack.add(
    (next, context) => (args) => {
      const earlier = reached.has(context);
      return next(args).catch((err: unknown) => {
        const headers = (args.request as { headers?: Record<string, string> }).headers;
        if (source && refusesCredentials(s3HttpStatus(err) ?? 0, s3ErrorCode(err))) {
          noteCredentials(err, source, headers, refused !== undefined);
          refused?.();
        }
        if (earlier && typeof err === "object" && err !== null) afterReached.add(err);
        if (!neverSent(err)) reached.add(context);
        throw err;
      });
    },
    { step: "finalizeRequest", priority: "low", name: "aidcAttempts" },
  );
}

/**
 * The error of a CreateBucket answered BucketAlreadyOwnedByYou after an earlier attempt
 * that may have made the bucket: whether it is this create's is not known (the lookup
 * of a pending create tells), so it is not "exists already".
 */
export function createdByEarlierAttempt(bucket: string, err: unknown): ServiceUnavailableError {
  return new ServiceUnavailableError(
    `S3 CreateBucket of bucket ${bucket}: BucketAlreadyOwnedByYou after an earlier attempt that may have created it`,
    { code: 409, endpoint: "s3:CreateBucket", outcomeUnknown: true, cause: err },
  );
}

/**
 * A bucket name that cannot be used: taken by another account (`BucketNameTaken`), or
 * existing in this account without adoption asked for (`BucketExistsNotAdopted`).
 * Terminal, and proof that the create did not take effect.
 */
export class BucketNameRefusedError extends ServiceRefusedError {
  constructor(
    readonly reason: "BucketNameTaken" | "BucketExistsNotAdopted",
    message: string,
    bucket: string,
  ) {
    super(message, { code: 409, endpoint: "s3:CreateBucket", serviceMessage: bucket });
  }
}

/** Runs an S3 call of `operation` on `bucket`; its failure is thrown as {@link objectStorageError}. */
export async function callS3<T>(
  operation: string,
  bucket: string,
  run: () => Promise<T>,
  mutating = false,
): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw objectStorageError(operation, bucket, err, mutating);
  }
}
