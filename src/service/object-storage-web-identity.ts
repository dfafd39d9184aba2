/**
 * S3 credentials from web identity (IRSA on EKS, workload identity federation, any OIDC
 * issuer the storage's STS trusts): the default connection's configured as the AWS SDKs
 * read it, `AWS_ROLE_ARN` and `AWS_WEB_IDENTITY_TOKEN_FILE` (a projected
 * service-account token), `AWS_ROLE_SESSION_NAME`, and `AWS_ENDPOINT_URL_STS` for an STS
 * other than AWS's (MinIO's is its S3 endpoint); a ServiceConnection's, its own role with
 * the same token file (controllers/connections/web-identity.ts). The SDK's provider (fromWebToken of
 * @aws-sdk/credential-provider-web-identity, the exchange its fromTokenFile makes) asks
 * STS AssumeRoleWithWebIdentity, through the proxy and agents the S3 client takes. The
 * token file is read here, at every exchange (the kubelet rewrites it), so that the
 * redactor has the token before it is sent; it is also read every refresh interval, and
 * a changed token drops the credentials it gave and is told as a change. Credentials are
 * kept until {@link RENEW_BEFORE_MS} before they expire (half their life when shorter),
 * and serve while renewals fail until shortly before, or until the storage refuses them
 * (revoked). A refused token, or none configured, is S3CredentialsRefused naming the
 * role and the file, never the token.
 */
import { readFile } from "node:fs/promises";
import { DEFAULT_IDLE_SOCKET_TIMEOUT_MS } from "./defaults.js";
import { ServiceUnavailableError } from "./errors.js";
import { idleBoundedAgents } from "./http-exchange.js";
import { ObjectStorageCredentialsError } from "./object-storage-errors.js";
import type { S3Credentials } from "./object-storage-types.js";
import { type ProxyResolver, proxyFailure, proxyOptionsFor } from "./service-proxy.js";

/** The environment variables of web identity, the AWS SDKs' own names. */
export const WEB_IDENTITY_ENV = {
  roleArn: "AWS_ROLE_ARN",
  tokenFile: "AWS_WEB_IDENTITY_TOKEN_FILE",
  sessionName: "AWS_ROLE_SESSION_NAME",
  stsEndpoint: "AWS_ENDPOINT_URL_STS",
} as const;

/**
 * How long before they expire credentials are renewed: the AWS SDK's own window
 * (EXPIRATION_MS of @smithy/core, by which its clients renew theirs).
 */
export const RENEW_BEFORE_MS = 300_000;

/** How long before they expire kept credentials stop serving while renewals fail. */
const EXPIRY_MARGIN_MS = 30_000;
/** How long after a failed renewal the next is tried, the kept credentials serving. */
const RETRY_RENEWAL_MS = 10_000;

/** Why a web identity without a token file gets no credentials. */
export const NO_TOKEN_FILE = `the operator has no projected token to exchange: ${WEB_IDENTITY_ENV.tokenFile} is not set (chart value objectStorage.webIdentity.roleArn or projectToken projects one, as does the EKS annotation eks.amazonaws.com/role-arn on its ServiceAccount)`;

/** Web identity as the environment sets it up; a connection's has an empty `tokenFile` when the operator has none. */
export interface WebIdentity {
  roleArn: string;
  tokenFile: string;
  sessionName?: string;
  /** The STS URL; default AWS's STS of the signing region. */
  stsEndpoint?: string;
}

/** The web identity of `env`, or undefined without both a role and a token file. */
export function webIdentityOf(env: Record<string, string | undefined>): WebIdentity | undefined {
  const value = (name: string) => env[name]?.trim() || undefined;
  const roleArn = value(WEB_IDENTITY_ENV.roleArn);
  const tokenFile = value(WEB_IDENTITY_ENV.tokenFile);
  if (!roleArn || !tokenFile) return undefined;
  const sessionName = value(WEB_IDENTITY_ENV.sessionName);
  const stsEndpoint = value(WEB_IDENTITY_ENV.stsEndpoint);
  return {
    roleArn,
    tokenFile,
    ...(sessionName ? { sessionName } : {}),
    ...(stsEndpoint ? { stsEndpoint } : {}),
  };
}

/** Credentials an exchange answers, with their expiry when they have one. */
export type ExchangedCredentials = S3Credentials & { expiration?: Date };

/** Options of {@link webIdentityCredentials}. */
export interface WebIdentityOptions {
  identity: WebIdentity;
  /** The signing region, which also names AWS's STS when no endpoint is set. */
  region: string;
  /** Timeout of one STS request. */
  timeoutMs: number;
  /** How often the token file is read while no exchange reads it. */
  refreshMs: number;
  proxyFor?: ProxyResolver;
  /** Registers each secret (the token, each credential) before it is used. */
  redactor?: { keep(source: string, secret: string): void };
  /** The exchange of a token; default the SDK's STS AssumeRoleWithWebIdentity. */
  exchange?: (token: string) => Promise<ExchangedCredentials>;
}

/** What {@link webIdentityCredentials} gives a connection. */
export interface WebIdentityCredentials {
  read(): Promise<S3Credentials>;
  watch(onChange: () => void): () => void;
  /** The storage refused the credentials (revoked): the next read exchanges again. */
  refused(): void;
  source: string;
}

/** A connection's credentials from `options.identity` (see the module comment). */
export function webIdentityCredentials(options: WebIdentityOptions): WebIdentityCredentials {
  const { identity, redactor } = options;
  const file = identity.tokenFile ? `token file ${identity.tokenFile}` : "no token file";
  const source = `web identity (role ${identity.roleArn}, ${file})`;
  const exchange = options.exchange ?? stsExchange(options, source);
  let held: { credentials: S3Credentials; renewAt: number; expires: number } | undefined;
  // No renewal is tried again before this, after one failed (the kept ones still hold).
  let retryAt = 0;
  let pending: Promise<S3Credentials> | undefined;
  // Counts the drops of `held`: an exchange that began before one keeps nothing.
  let drops = 0;
  // The last token read, "" when reads failed before one was; undefined before any read.
  let lastToken: string | undefined;
  let onChange: (() => void) | undefined;
  const readToken = async () => {
    const file = identity.tokenFile;
    if (!file) throw refusal(`${source}: ${NO_TOKEN_FILE}`);
    let token = "";
    try {
      token = (await readFile(file, "utf8")).trim();
    } catch (err) {
      lastToken ??= "";
      const code = (err as NodeJS.ErrnoException).code ?? String(err);
      throw refusal(`the web identity token file ${file} cannot be read: ${code}`, err);
    }
    if (!token) {
      // Also a file caught between its truncation and its write: not a change.
      lastToken ??= "";
      throw refusal(`the web identity token file ${file} is empty`);
    }
    redactor?.keep("service.objectStorage.webIdentityToken", token);
    if (lastToken !== undefined && token !== lastToken) {
      // Rewritten, or readable again: what the token before gave is not used again.
      held = undefined;
      drops++;
      onChange?.();
    }
    lastToken = token;
    return token;
  };
  const renew = async () => {
    const token = await readToken();
    const began = drops;
    const { expiration, ...got } = await exchange(token);
    const credentials: S3Credentials = {
      accessKeyId: got.accessKeyId,
      secretAccessKey: got.secretAccessKey,
      ...(got.sessionToken ? { sessionToken: got.sessionToken } : {}),
    };
    for (const [field, value] of Object.entries(credentials)) {
      redactor?.keep(`service.objectStorage.${field}`, value);
    }
    const now = Date.now();
    const expires = expiration?.getTime() ?? Number.POSITIVE_INFINITY;
    const renewAt = expires - Math.min(RENEW_BEFORE_MS, (expires - now) / 2);
    if (began === drops) held = { credentials, renewAt, expires };
    return credentials;
  };
  const read = async () => {
    const now = Date.now();
    if (held && now < held.renewAt) return held.credentials;
    // While a renewal fails (STS down), the kept credentials serve until shortly before
    // they expire; a failed renewal is tried again RETRY_RENEWAL_MS later, not per call.
    const kept = held && now < held.expires - EXPIRY_MARGIN_MS ? held.credentials : undefined;
    if (kept && now < retryAt) return kept;
    pending ??= renew().finally(() => {
      pending = undefined;
    });
    if (!kept) return pending;
    return pending.catch(() => {
      retryAt = Date.now() + RETRY_RENEWAL_MS;
      return kept;
    });
  };
  const watch = (tell: () => void) => {
    onChange = tell;
    const timer = setInterval(() => readToken().catch(() => undefined), options.refreshMs);
    timer.unref();
    return () => {
      clearInterval(timer);
      onChange = undefined;
    };
  };
  const refused = () => {
    held = undefined;
    drops++;
  };
  return { read, watch, refused, source };
}

/** Maximum sockets of the STS client (one exchange at a time; a spare). */
const STS_MAX_SOCKETS = 2;

/**
 * The SDK's exchange of a token with STS (the S3 client's proxy, timeout and keep-alive
 * agents), its failures as service errors: a refusal (an answer 4xx but 429) is an
 * ObjectStorageCredentialsError naming `source`; no answer (naming a proxy it could not
 * reach) or a 5xx is retried.
 */
function stsExchange(
  options: WebIdentityOptions,
  source: string,
): (token: string) => Promise<ExchangedCredentials> {
  const { identity, region } = options;
  const url = identity.stsEndpoint ?? `https://sts.${region}.amazonaws.com`;
  const agents = idleBoundedAgents(
    DEFAULT_IDLE_SOCKET_TIMEOUT_MS,
    STS_MAX_SOCKETS,
    proxyOptionsFor("the STS endpoint", url, options.proxyFor),
  );
  const clientConfig = {
    region,
    ...(identity.stsEndpoint ? { endpoint: identity.stsEndpoint } : {}),
    maxAttempts: 2,
    requestHandler: {
      requestTimeout: options.timeoutMs,
      throwOnRequestTimeout: true,
      httpAgent: agents.http,
      httpsAgent: agents.https,
    },
  };
  const where = `STS AssumeRoleWithWebIdentity at ${url}`;
  return async (webIdentityToken) => {
    // Loaded with the first exchange: an operator without web identity never loads it.
    const { fromWebToken } = await import("@aws-sdk/credential-provider-web-identity");
    try {
      return await fromWebToken({
        roleArn: identity.roleArn,
        ...(identity.sessionName ? { roleSessionName: identity.sessionName } : {}),
        webIdentityToken,
        clientConfig,
      })();
    } catch (err) {
      const e = err as {
        Code?: string;
        name?: string;
        message?: string;
        $metadata?: { httpStatusCode?: number };
      };
      const status = e.$metadata?.httpStatusCode;
      const said = `${e.Code ?? e.name ?? "Error"}: ${e.message ?? String(err)}`;
      if (status !== undefined && status >= 400 && status < 500 && status !== 429) {
        throw refusal(
          `${where}: HTTP ${status} ${said} (${source} was refused: check that the role trusts the token's issuer and audience and that the token is current; the next call reads the file again)`,
          err,
          status,
        );
      }
      // Retried; never an unknown outcome: the S3 request waiting for these was not sent.
      const unreached = proxyFailure(agents.proxy, err)?.message ?? said;
      const what = status === undefined ? `no answer (${unreached})` : `HTTP ${status} ${said}`;
      throw new ServiceUnavailableError(`${where}: ${what}`, {
        code: status,
        endpoint: "sts:AssumeRoleWithWebIdentity",
        cause: err,
      });
    }
  };
}

/** A refusal of the web identity: held until the token or the role's trust changes. */
function refusal(message: string, cause?: unknown, status?: number): ObjectStorageCredentialsError {
  return new ObjectStorageCredentialsError(message, {
    code: status,
    endpoint: "sts:AssumeRoleWithWebIdentity",
    ...(cause === undefined ? {} : { cause }),
  });
}
