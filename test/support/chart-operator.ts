import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import * as k8s from "@kubernetes/client-node";
import { runOperator } from "../../src/cli/run.js";
import { freePort } from "../../src/controlplane/controlplane.js";
import { LocalS3Server } from "../../src/controlplane/s3-server.js";
import type { Manager } from "../../src/runtime/manager.js";
import { operatorKubeConfigFor, type ServiceAccountRef } from "./chart.js";
import { adminKubeConfig } from "./kube.js";

/** Where an installed operator's objects are, and what to run it against. */
export interface InstalledOperatorOptions {
  /** `<fullname>` of the install: its ConfigMap is `<fullname>-config`. */
  fullname: string;
  namespace: string;
  serviceAccount: ServiceAccountRef;
  /** The Secret of the API key (key `apiKey`), as the Deployment mounts it. */
  apiKeySecret: string;
  /** The service's URL (the emulator). */
  serviceUrl: string;
  /** POD_NAME, the Lease holder's prefix. */
  podName: string;
  /** Where the kubeconfig, config and key files go. */
  dir: string;
  /** A MinIO of its own as the default connection's object storage (default true). */
  objectStorage?: boolean;
}

/** An operator started by {@link startInstalledOperator}. */
export interface InstalledOperator {
  manager: () => Manager | undefined;
  /** Every JSON log line the operator wrote. */
  logs: string[];
  stop(): Promise<number>;
}

/**
 * Runs the operator of an install (chart or kustomize base) as its ServiceAccount, the
 * way its pod does: the install's config file (from its ConfigMap), POD_NAME and
 * POD_NAMESPACE set, the API key in a file (read from the Secret as the kubelet would
 * mount it). Only the service URL and a short poll interval are set beside it.
 */
export async function startInstalledOperator(
  o: InstalledOperatorOptions,
): Promise<InstalledOperator> {
  const kubeconfig = join(o.dir, `${o.podName}.kubeconfig`);
  await writeFile(kubeconfig, operatorKubeConfigFor(o.serviceAccount).exportConfig(), {
    mode: 0o600,
  });

  const admin = adminKubeConfig().makeApiClient(k8s.CoreV1Api);
  const configMap = await admin.readNamespacedConfigMap({
    namespace: o.namespace,
    name: `${o.fullname}-config`,
  });
  const configFile = join(o.dir, `${o.podName}-config.yaml`);
  await writeFile(configFile, configMap.data?.["config.yaml"] ?? "");

  // The kubelet's part: it mounts the Secret (the ServiceAccount cannot read it).
  const secret = await admin.readNamespacedSecret({
    namespace: o.namespace,
    name: o.apiKeySecret,
  });
  const keyFile = join(o.dir, `${o.podName}-api-key`);
  await writeFile(keyFile, Buffer.from(secret.data?.apiKey ?? "", "base64"), { mode: 0o600 });

  // The object storage of the default connection (the Bucket sample): a MinIO of this
  // operator's own, since bucket names are global to a server.
  const s3 = o.objectStorage === false ? undefined : await new LocalS3Server().start();
  const logs: string[] = [];
  let manager: Manager | undefined;
  let stop: () => void = () => undefined;
  const exited = runOperator({
    configFile,
    kubeconfig,
    env: {
      POD_NAME: o.podName,
      POD_NAMESPACE: o.namespace,
      AIDC_API_KEY_FILE: keyFile,
      AIDC_SERVICE_BASE_URL: o.serviceUrl,
      AIDC_SERVICE_ALLOW_INSECURE_HTTP: "true",
      ...(s3
        ? {
            AIDC_OBJECT_STORAGE_ENDPOINT: s3.url,
            AIDC_OBJECT_STORAGE_ALLOW_INSECURE_HTTP: "true",
            AIDC_S3_ACCESS_KEY_ID: s3.accessKeyId,
            AIDC_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
          }
        : {}),
      AIDC_POLL_INTERVAL_MS: "1000",
      AIDC_METRICS_PORT: String(await freePort()),
      AIDC_LOG_LEVEL: "debug",
    },
    stopSignal: new Promise<void>((r) => {
      stop = r;
    }),
    onStarted: (m) => {
      manager = m;
    },
    logDestination: { write: (line: string) => void logs.push(line) },
  });
  return {
    manager: () => manager,
    logs,
    stop: async () => {
      stop();
      const code = await exited;
      await s3?.stop();
      return code;
    },
  };
}
