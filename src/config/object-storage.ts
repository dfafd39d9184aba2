import { readdir, readFile, realpath } from "node:fs/promises";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import type { ObjectStorageSettings, S3Credentials } from "../service/object-storage.js";
import {
  WEB_IDENTITY_ENV,
  webIdentityCredentials,
  webIdentityOf,
} from "../service/object-storage-web-identity.js";
import type { ProxyResolver } from "../service/service-proxy.js";
import { rereadEvery } from "./api-key.js";
import type { OperatorConfig } from "./schema.js";
import { S3_KEY_ENV } from "./settings.js";

/**
 * Reads the default connection's S3 key pair: from `AIDC_S3_ACCESS_KEY_ID` and
 * `AIDC_S3_SECRET_ACCESS_KEY`, else from the files `accessKeyId` and `secretAccessKey`
 * of `objectStorage.credentialsDir` (the mounted Secret), read again when the last read
 * is `credentialsRefreshMs` old, so a rotated Secret takes effect without a restart;
 * with the session token of temporary ones from `AIDC_S3_SESSION_TOKEN` or the file
 * `sessionToken`, when there; else from web identity (`AWS_ROLE_ARN` and
 * `AWS_WEB_IDENTITY_TOKEN_FILE`: service/object-storage-web-identity.ts, through
 * `proxyFor`). Undefined when none is configured; `source` says which it is, `watch`
 * reads the files every interval and tells a change. Every value read is registered
 * with `redactor` first (as `service.objectStorage.<field>`); nothing here logs a key.
 */
export function s3CredentialsReader(
  config: OperatorConfig,
  env: Record<string, string | undefined> = process.env,
  redactor?: CredentialsRedactor,
  proxyFor?: ProxyResolver,
):
  | (Pick<ObjectStorageSettings, "source" | "watch" | "refused"> & {
      read: () => Promise<S3Credentials>;
    })
  | undefined {
  const fromEnv = withToken(
    env[S3_KEY_ENV.accessKeyId]?.trim() ?? "",
    env[S3_KEY_ENV.secretAccessKey]?.trim() ?? "",
    env[S3_KEY_ENV.sessionToken]?.trim(),
  );
  if (fromEnv.accessKeyId && fromEnv.secretAccessKey) {
    const read = async () => {
      keepAll(redactor, fromEnv);
      return fromEnv;
    };
    // From the environment: fixed for the process, nothing to watch.
    return { read, source: `${S3_KEY_ENV.accessKeyId} and ${S3_KEY_ENV.secretAccessKey}` };
  }
  const dir = config.objectStorage.credentialsDir;
  const refreshMs = config.objectStorage.credentialsRefreshMs;
  if (!dir) {
    const identity = webIdentityOf(env);
    if (!identity) return undefined;
    return webIdentityCredentials({
      identity,
      region: config.objectStorage.region,
      timeoutMs: config.objectStorage.timeoutMs,
      refreshMs,
      ...(proxyFor ? { proxyFor } : {}),
      ...(redactor ? { redactor } : {}),
    });
  }
  let cached: { credentials: S3Credentials; at: number } | undefined;
  let onChange: (() => void) | undefined;
  const load = async () => {
    const [accessKeyId, secretAccessKey, sessionToken] = await readSecretFiles(dir, FILES);
    const credentials = withToken(accessKeyId ?? "", secretAccessKey ?? "", sessionToken);
    keepAll(redactor, credentials);
    const changed = cached && !isDeepStrictEqual(cached.credentials, credentials);
    cached = { credentials, at: Date.now() };
    if (changed) onChange?.();
    return credentials;
  };
  const read = async () =>
    cached && Date.now() - cached.at < refreshMs ? cached.credentials : load();
  const watch = (tell: () => void) => {
    onChange = tell;
    const stop = rereadEvery(load, refreshMs);
    return () => {
      stop();
      onChange = undefined;
    };
  };
  return { read, watch, source: `the files of objectStorage.credentialsDir ${dir}` };
}

/** The files of the mounted Secret; a long-lived pair has no `sessionToken`. */
const FILES = ["accessKeyId", "secretAccessKey", "sessionToken"] as const;
/** Reads of a Secret volume's files that a removed version may interrupt, at most. */
const SECRET_READ_ATTEMPTS = 3;

/**
 * The trimmed text of `files` in `dir`, "" for a `sessionToken` that is not there, all
 * from one version of a Secret volume: the kubelet writes each version to a directory of
 * its own and swaps the `..data` link to it at once, so the files are read from the
 * directory the link names, not through it (a swap between two reads would mix a key
 * with another's secret). A version removed under the reads is read again from the new.
 */
async function readSecretFiles(dir: string, files: readonly string[]): Promise<string[]> {
  for (let attempt = 1; ; attempt++) {
    const version = await realpath(join(dir, "..data")).catch(() => undefined);
    const base = version ?? dir;
    try {
      const present = new Set(await readdir(base));
      return await Promise.all(
        files.map(async (f) =>
          f === "sessionToken" && !present.has(f)
            ? ""
            : (await readFile(join(base, f), "utf8")).trim(),
        ),
      );
    } catch (err) {
      const gone = (err as NodeJS.ErrnoException).code === "ENOENT";
      if (!version || !gone || attempt >= SECRET_READ_ATTEMPTS) throw err;
    }
  }
}

/** What registers a secret to redact (runtime/outbound-guards.ts SecretRedactor). */
export interface CredentialsRedactor {
  keep(source: string, secret: string): void;
}

/** Registers each value of `credentials` with `redactor`. */
function keepAll(redactor: CredentialsRedactor | undefined, credentials: S3Credentials): void {
  for (const [field, value] of Object.entries(credentials)) {
    redactor?.keep(`service.objectStorage.${field}`, value);
  }
}

/** A key pair, with `sessionToken` when it is not empty. */
const withToken = (
  accessKeyId: string,
  secretAccessKey: string,
  sessionToken: string | undefined,
): S3Credentials => ({ accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) });

/**
 * The object storage of the default connection (the operator's configuration), or
 * undefined when its endpoint or its credentials are not configured. A
 * ServiceConnection's `spec.objectStorage` takes its place for the objects that use one.
 */
export function defaultObjectStorage(
  config: OperatorConfig,
  env: Record<string, string | undefined> = process.env,
  redactor?: CredentialsRedactor,
  proxyFor?: ProxyResolver,
): ObjectStorageSettings | undefined {
  const endpoint = config.objectStorage.endpoint;
  const reader = s3CredentialsReader(config, env, redactor, proxyFor);
  if (!endpoint || !reader) return undefined;
  return {
    endpoint,
    region: config.objectStorage.region,
    credentials: reader.read,
    source: reader.source,
    ...(reader.watch ? { watch: reader.watch } : {}),
    ...(reader.refused ? { refused: reader.refused } : {}),
    exportCredentials: config.objectStorage.exportCredentials,
  };
}

/** What every connection's exchange shares: the operator's token file and its limits. */
export interface ConnectionWebIdentityOptions {
  /** The operator's projected token; undefined: it has none. */
  tokenFile: string | undefined;
  /** Timeout of one STS request (the object storage's `timeoutMs`). */
  timeoutMs: number;
  /** How often the token file is read while no exchange reads it. */
  refreshMs: number;
}

/** What a ServiceConnection's web identity exchanges in a process whose environment is `env`. */
export function connectionWebIdentityOptions(
  env: Record<string, string | undefined>,
  objectStorage: { timeoutMs: number; credentialsRefreshMs: number },
): ConnectionWebIdentityOptions {
  return {
    tokenFile: env[WEB_IDENTITY_ENV.tokenFile]?.trim() || undefined,
    timeoutMs: objectStorage.timeoutMs,
    refreshMs: objectStorage.credentialsRefreshMs,
  };
}
