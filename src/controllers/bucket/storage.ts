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
import type { KubeObject } from "../../runtime/resource.js";
import type {
  ObjectStorageClient,
  ObjectStorageResolver,
  ObjectStorageSettings,
} from "../../service/object-storage.js";
import type { ControllerDeps } from "../controller-factory.js";

/** The region requests are signed for when a connection names none. */
export const DEFAULT_S3_REGION = "us-east-1";

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
    const key = `${conn.label}|${settings.endpoint}|${region}`;
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
        timeoutMs: deps.config.objectStorage.timeoutMs,
        // Closed before the S3 server closes them, as the service client's connections.
        idleSocketTimeoutMs: deps.config.service.idleSocketTimeoutMs,
      });
      clients.set(key, client);
    }
    return client;
  };
}
