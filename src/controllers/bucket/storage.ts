/**
 * Which object storage a Bucket uses: its connection's (`connections.forObject`, the
 * ServiceConnection it names, else its namespace's, else the default), the default
 * connection's being the operator's `objectStorage` config. One S3 client per
 * connection and endpoint, made on first use; the credentials are read through the
 * connection at every request, so a rotated Secret is used at once.
 *
 * The S3 client (`@aws-sdk/client-s3`, ~20 MiB once loaded) is imported with the first
 * client made, not at start: an operator without Buckets never loads it.
 */
import { BUCKET_REASONS } from "../../crds/bucket.js";
import type { KubeObject } from "../../runtime/resource.js";
import { DEFAULT_S3_REGION } from "../../service/defaults.js";
import type {
  ObjectStorageClient,
  ObjectStorageResolver,
  ObjectStorageSettings,
} from "../../service/object-storage.js";
import type { ResolvedConnection } from "../connections/client.js";
import type { ControllerDeps } from "../controller-factory.js";
import type { SecretDetails } from "../managed/external-client.js";

export { DEFAULT_S3_REGION };

/** The resolver of the Bucket controller over `deps` (see the module comment). */
export function objectStorageOf(
  deps: Pick<ControllerDeps, "connections" | "config">,
): ObjectStorageResolver {
  const clients = new Map<string, ObjectStorageClient>();
  return async (obj) => {
    const conn = deps.connections.forObject(obj as KubeObject);
    const settings: ObjectStorageSettings | undefined = conn.objectStorage;
    if (!settings) return undefined;
    const region = settings.region ?? DEFAULT_S3_REGION;
    const key = `${conn.label}|${settings.endpoint}|${region}|${settings.source ?? ""}`;
    let client = clients.get(key);
    if (!client) {
      const { ObjectStorageClient } = await import("../../service/object-storage.js");
      // Another call may have made it while the module loaded.
      client = clients.get(key);
      if (client) return client;
      client = new ObjectStorageClient({
        endpoint: settings.endpoint,
        region,
        credentials: () => settings.credentials(),
        ...(settings.source ? { credentialsSource: settings.source } : {}),
        ...(settings.refused ? { credentialsRefused: () => settings.refused?.() } : {}),
        timeoutMs: deps.config.objectStorage.timeoutMs,
        // Closed before the S3 server closes them, as the service client's connections.
        idleSocketTimeoutMs: deps.config.service.idleSocketTimeoutMs,
        ...(deps.connections.proxyFor ? { proxyFor: deps.connections.proxyFor } : {}),
        ...(deps.connections.mayCall ? { mayCall: deps.connections.mayCall } : {}),
      });
      clients.set(key, client);
    }
    return client;
  };
}

/**
 * The keys of the Secret of a Bucket's `spec.exportTo.secretName`, as the AWS SDKs read
 * them from the environment; the session token only with temporary credentials.
 */
export const CREDENTIAL_KEYS = {
  accessKeyId: "AWS_ACCESS_KEY_ID",
  secretAccessKey: "AWS_SECRET_ACCESS_KEY",
  sessionToken: "AWS_SESSION_TOKEN",
} as const;

/** Why no Bucket's key pair is written while the operator's setting is off. */
export const CREDENTIALS_EXPORT_DISABLED =
  "exporting credentials is disabled in the operator (set config objectStorage.exportCredentials, chart value objectStorage.exportCredentials, to true)";

/**
 * Why the S3 key pair of a Bucket of connection `conn` may not be written into the
 * Secret of its `spec.exportTo.secretName`, naming the setting to turn on (never a key);
 * undefined when it may. `enabled` is the operator's `objectStorage.exportCredentials`
 * (chart value `objectStorage.exportCredentials`), without which the operator has no
 * access to Secrets in the watched namespaces; a ServiceConnection must allow it as
 * well (its `spec.objectStorage.exportCredentials`), the default connection follows
 * the operator's setting.
 */
export function credentialsExportRefusal(
  enabled: boolean,
  conn: Pick<ResolvedConnection, "name" | "objectStorage">,
): string | undefined {
  if (!enabled) return CREDENTIALS_EXPORT_DISABLED;
  const which = conn.name ? `ServiceConnection ${conn.name}` : "the default connection";
  if (!conn.objectStorage) return `${which} has no object storage`;
  if (!conn.objectStorage.exportCredentials) {
    return conn.name
      ? `${which} does not allow exporting credentials (set its spec.objectStorage.exportCredentials to true)`
      : `${which} does not allow exporting credentials (config objectStorage.exportCredentials)`;
  }
  return undefined;
}

/**
 * What a Bucket of connection `conn` writes into its `spec.exportTo` Secret: the
 * connection's S3 key pair when {@link credentialsExportRefusal} finds nothing against
 * it, else the refusal. The key pair is read only when it may be written.
 */
export async function credentialsExport(
  enabled: boolean,
  conn: Pick<ResolvedConnection, "name" | "objectStorage">,
): Promise<SecretDetails> {
  const refused = credentialsExportRefusal(enabled, conn);
  if (refused !== undefined || !conn.objectStorage) {
    return {
      refused: refused ?? "no object storage",
      reason: BUCKET_REASONS.names.CredentialsExportNotAllowed,
    };
  }
  const { accessKeyId, secretAccessKey, sessionToken } = await conn.objectStorage.credentials();
  return {
    data: {
      [CREDENTIAL_KEYS.accessKeyId]: accessKeyId,
      [CREDENTIAL_KEYS.secretAccessKey]: secretAccessKey,
      ...(sessionToken ? { [CREDENTIAL_KEYS.sessionToken]: sessionToken } : {}),
    },
  };
}
