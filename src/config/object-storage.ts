import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { ObjectStorageSettings, S3Credentials } from "../service/object-storage.js";
import type { OperatorConfig } from "./schema.js";
import { S3_KEY_ENV } from "./settings.js";

/**
 * Reads the default connection's S3 key pair: from `AIDC_S3_ACCESS_KEY_ID` and
 * `AIDC_S3_SECRET_ACCESS_KEY`, else from the files `accessKeyId` and `secretAccessKey`
 * of `objectStorage.credentialsDir` (the mounted Secret), read again when the last read
 * is `credentialsRefreshMs` old, so a rotated Secret takes effect without a restart.
 * Undefined when neither is configured. `onRead` sees every pair read (to register it
 * with the redactor); nothing here logs a key.
 */
export function s3CredentialsReader(
  config: OperatorConfig,
  env: Record<string, string | undefined> = process.env,
  onRead?: (credentials: S3Credentials) => void,
): (() => Promise<S3Credentials>) | undefined {
  const fromEnv = {
    accessKeyId: env[S3_KEY_ENV.accessKeyId]?.trim() ?? "",
    secretAccessKey: env[S3_KEY_ENV.secretAccessKey]?.trim() ?? "",
  };
  if (fromEnv.accessKeyId && fromEnv.secretAccessKey) {
    return async () => {
      onRead?.(fromEnv);
      return fromEnv;
    };
  }
  const dir = config.objectStorage.credentialsDir;
  if (!dir) return undefined;
  let cached: { credentials: S3Credentials; at: number } | undefined;
  return async () => {
    if (cached && Date.now() - cached.at < config.objectStorage.credentialsRefreshMs) {
      return cached.credentials;
    }
    const [accessKeyId, secretAccessKey] = await Promise.all(
      ["accessKeyId", "secretAccessKey"].map(async (f) =>
        (await readFile(join(dir, f), "utf8")).trim(),
      ),
    );
    const credentials = { accessKeyId: accessKeyId ?? "", secretAccessKey: secretAccessKey ?? "" };
    onRead?.(credentials);
    cached = { credentials, at: Date.now() };
    return credentials;
  };
}

/**
 * The object storage of the default connection (the operator's configuration), or
 * undefined when its endpoint or its credentials are not configured. A
 * ServiceConnection's `spec.objectStorage` takes its place for the objects that use one.
 */
export function defaultObjectStorage(
  config: OperatorConfig,
  env: Record<string, string | undefined> = process.env,
  onRead?: (credentials: S3Credentials) => void,
): ObjectStorageSettings | undefined {
  const endpoint = config.objectStorage.endpoint;
  const credentials = s3CredentialsReader(config, env, onRead);
  if (!endpoint || !credentials) return undefined;
  return {
    endpoint,
    region: config.objectStorage.region,
    credentials,
    exportCredentials: config.objectStorage.exportCredentials,
  };
}
