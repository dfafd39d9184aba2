/**
 * The object storage's refusals of the S3 credentials: which answers are one, and what
 * the message adds to say where the credentials come from (the Secret, the files, the
 * environment) and, for temporary ones, whether their session token was sent. Names
 * only: no credential reaches a message.
 */

/** S3 error codes that say "these credentials are refused". */
const CREDENTIAL_CODES = new Set([
  "InvalidAccessKeyId",
  "SignatureDoesNotMatch",
  "InvalidToken",
  // MinIO's answer to a session token missing, altered or sent with a long-lived key.
  "InvalidTokenId",
  "ExpiredToken",
  "TokenRefreshRequired",
  "XAmzContentSHA256Mismatch",
]);

/** The codes of a refused session token (MinIO answers InvalidAccessKeyId once it expired). */
const TOKEN_CODES = new Set([
  "InvalidAccessKeyId",
  "InvalidToken",
  "InvalidTokenId",
  "ExpiredToken",
  "TokenRefreshRequired",
]);

/** Whether an answer of HTTP `status` with S3 error `code` refuses the credentials. */
export function refusesCredentials(status: number, code: string | undefined): boolean {
  return status === 401 || (code !== undefined && CREDENTIAL_CODES.has(code));
}

/**
 * Where the credentials of each refused attempt came from, whether it sent a token, and
 * whether the source gets new ones itself (web identity asks its STS again).
 */
const refusals = new WeakMap<object, { source: string; token: boolean; renews: boolean }>();

/**
 * Records that the failed attempt `err` was signed with the credentials of `source`,
 * with a session token or not (its `x-amz-security-token` header); `renews`: the source
 * gets new ones at the next call.
 */
export function noteCredentials(
  err: unknown,
  source: string,
  headers: Record<string, string> | undefined,
  renews = false,
): void {
  if (typeof err !== "object" || err === null) return;
  refusals.set(err, { source, token: Boolean(headers?.["x-amz-security-token"]), renews });
}

/**
 * What to add to the message of the refusal `err` (S3 error `code`): where its
 * credentials come from and what to do there; empty when not known.
 */
export function credentialsHint(err: unknown, code: string | undefined): string {
  const noted = typeof err === "object" && err !== null ? refusals.get(err) : undefined;
  if (!noted) return "";
  const { source, token, renews } = noted;
  if (renews) {
    return ` (the S3 credentials of ${source} were refused: expired, revoked or not valid for this storage; the next call asks for new ones)`;
  }
  if (code && TOKEN_CODES.has(code) && (token || code === "ExpiredToken")) {
    return ` (the S3 credentials of ${source} were refused with their session token: temporary ones expired or revoked, or a token beside a long-lived key pair; write fresh ones there, the next call uses them)`;
  }
  if (!token && (code === "InvalidToken" || code === "InvalidTokenId")) {
    return ` (the S3 credentials of ${source} have no session token: temporary credentials need theirs)`;
  }
  return ` (fix the S3 credentials of ${source}: the next call uses them)`;
}
