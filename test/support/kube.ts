import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as k8s from "@kubernetes/client-node";
import { inject } from "vitest";
import { allCrds } from "../../src/crds/index.js";
import { KubeClient } from "../../src/runtime/kube.js";
import { isNotFound } from "../../src/runtime/kube-errors.js";

let cacheDir: string | undefined;

/**
 * The discovery cache of the kubectl and helm this test file runs (their KUBECACHEDIR),
 * of its own. Shared, it is keyed by the API server's address only, so kinds another
 * file created and deleted (test/e2e/crd-upgrade.test.ts: the same kinds in a group of
 * its own) stay in it: a later `kubectl get aidc` or `kubectl explain trainingjob`
 * resolves to the deleted group and fails ("couldn't find resource").
 */
export function kubeCacheDir(): string {
  cacheDir ??= mkdtempSync(join(tmpdir(), "aidc-kube-cache-"));
  return cacheDir;
}

/** A KubeConfig for the admin of the integration run's control plane. */
export function adminKubeConfig(): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(inject("kubeconfigPath"));
  return kc;
}

/** A KubeConfig like `kc` but reaching its server at `port` of the loopback address (a TcpProxy's). */
export function viaPort(kc: k8s.KubeConfig, port: number): k8s.KubeConfig {
  const copy = new k8s.KubeConfig();
  copy.loadFromString(kc.exportConfig());
  const cluster = copy.getCurrentCluster();
  if (!cluster) throw new Error("no cluster");
  copy.clusters = [{ ...cluster, server: `https://127.0.0.1:${port}` }];
  return copy;
}

/**
 * A KubeConfig that acts as `user` through impersonation by the admin (client-node
 * sends Impersonate-User only, so group bindings of `user` do not apply).
 */
export function impersonatingKubeConfig(user: string): k8s.KubeConfig {
  const kc = adminKubeConfig();
  const current = kc.getCurrentUser();
  if (!current) throw new Error("kubeconfig has no user");
  kc.users = [{ ...current, impersonateUser: user } as k8s.User];
  return kc;
}

/** The namespaces this test file created and has not deleted, with the admin that did. */
const createdNamespaces = new Map<string, k8s.KubeConfig>();

/** Hands over (and forgets) the namespaces this file created and left (sweep-namespaces.ts). */
export function takeCreatedNamespaces(): [string, k8s.KubeConfig][] {
  const left = [...createdNamespaces];
  createdNamespaces.clear();
  return left;
}

/** Rethrows all but a 404: an object may go between the list and the write. */
function unlessGone(err: unknown): void {
  if (!isNotFound(err)) throw err;
}

/**
 * Deletes the custom resources of `namespace`, their finalizers taken off first (for a
 * file whose operators have stopped: nothing else would remove them), then the namespace,
 * whose other objects go in the background. Run after each integration file for the
 * namespaces it left (sweep-namespaces.ts).
 */
export async function sweepNamespace(kc: k8s.KubeConfig, namespace: string): Promise<void> {
  const kube = new KubeClient(kc);
  for (const crd of allCrds.filter((c) => c.namespaced)) {
    for (const obj of (await kube.list(crd, namespace)).items) {
      const key = { namespace, name: obj.metadata?.name ?? "" };
      if ((obj.metadata?.finalizers ?? []).length > 0)
        await kube.patch(crd, key, { metadata: { finalizers: null } }).catch(unlessGone);
      await kube.delete(crd, key);
    }
  }
  await kc.makeApiClient(k8s.CoreV1Api).deleteNamespace({ name: namespace }).catch(unlessGone);
}

/** A fresh namespace with a unique name; returns its name. */
export async function createNamespace(kc: k8s.KubeConfig, prefix: string): Promise<string> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const name = `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
  await core.createNamespace({ body: { metadata: { name } } });
  createdNamespaces.set(name, kc);
  return name;
}

/**
 * Deletes a namespace and waits until it is gone (the control plane's namespace
 * controller deletes what is in it first). For a file that leaves objects no operator
 * finalizes, such as the samples: an operator watching all namespaces in a later file
 * would otherwise reconcile them against its own emulator, beside its own samples.
 */
export async function deleteNamespace(
  kc: k8s.KubeConfig,
  name: string,
  timeoutMs = 60_000,
): Promise<void> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  createdNamespaces.delete(name);
  await core.deleteNamespace({ name });
  await eventually(
    () =>
      core.readNamespace({ name }).then(
        () => false,
        (err: unknown) => {
          if (err instanceof k8s.ApiException && err.code === 404) return true;
          throw err;
        },
      ),
    timeoutMs,
  );
}

/** Polls `check` until it returns a truthy value or `timeoutMs` passes. */
export async function eventually<T>(
  check: () => Promise<T | undefined | null | false>,
  timeoutMs = 30_000,
  intervalMs = 200,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      lastError = err;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(
    `condition not met within ${timeoutMs} ms${lastError ? `: ${String(lastError)}` : ""}`,
  );
}
