/**
 * What the benchmark and the chaos script run against: a local control plane with the
 * CRDs, and the service emulator in this process (its request log and state are read
 * directly). `stop()` ends both.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { promisify } from "node:util";
import * as k8s from "@kubernetes/client-node";
import { repoRoot } from "../../src/controlplane/binaries.js";
import { LocalControlPlane } from "../../src/controlplane/controlplane.js";
import {
  type EmulatorOptions,
  type RunningEmulator,
  startEmulator,
} from "../../src/emulator/server.js";
import { KubeClient } from "../../src/runtime/kube.js";
import { JOB, NAS } from "./workload.js";

const run = promisify(execFile);

/** A running control plane (or one given by kubeconfig) and emulator. */
export interface BenchEnvironment {
  /** Present when the plane was started here (it can then be restarted). */
  plane?: LocalControlPlane;
  kubeconfigPath: string;
  kc: k8s.KubeConfig;
  /** A Kubernetes client without a client-side rate limit worth the name. */
  kube: KubeClient;
  emulator: RunningEmulator;
  /** A fresh random key: it exists only in this process and the operator's environment. */
  apiKey: string;
  stop(): Promise<void>;
}

/** Applies the CRDs from deploy/crds with kubectl and waits until they are Established. */
export async function applyCrds(kubectl: string, kubeconfigPath: string): Promise<void> {
  const k = (args: string[]) => run(kubectl, [`--kubeconfig=${kubeconfigPath}`, ...args]);
  await k(["apply", "--server-side", "-k", join(repoRoot, "deploy", "crds")]);
  await k([
    "wait",
    "--for=condition=Established",
    "crd",
    "-l",
    "app.kubernetes.io/part-of=aidc-operator",
    "--timeout=60s",
  ]);
}

/**
 * Starts a control plane (unless `kubeconfigPath` names a running one whose CRDs are
 * installed), applies the CRDs, and starts the emulator with `emulator` options.
 */
export async function startEnvironment(
  emulatorOptions: Partial<EmulatorOptions>,
  kubeconfigPath?: string,
): Promise<BenchEnvironment> {
  let plane: LocalControlPlane | undefined;
  if (!kubeconfigPath) {
    plane = await new LocalControlPlane().start();
    try {
      await applyCrds(plane.binaries?.kubectl ?? "kubectl", plane.kubeconfigPath);
    } catch (err) {
      await plane.stop();
      throw err;
    }
  }
  const path = plane?.kubeconfigPath ?? (kubeconfigPath as string);
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(path);
  const kube = new KubeClient(kc, { rateLimit: { qps: 1000, burst: 1000 } });
  await waitUntilServed(kube);
  const apiKey = randomBytes(24).toString("hex");
  const emulator = await startEmulator({
    subscriptionDelayMs: 0,
    requestLogCapacity: 2_000_000,
    ...emulatorOptions,
    apiKey,
  });
  return {
    ...(plane ? { plane } : {}),
    kubeconfigPath: path,
    kc,
    kube,
    emulator,
    apiKey,
    stop: async () => {
      await emulator.stop();
      await plane?.stop();
    },
  };
}

/**
 * Waits until both kinds can be listed: right after a CRD is Established the API
 * server may still answer 429 "storage is (re)initializing" for a moment.
 */
async function waitUntilServed(kube: KubeClient, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      for (const res of [NAS, JOB]) await kube.list(res, "default");
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
