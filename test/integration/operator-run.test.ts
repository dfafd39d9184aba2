import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import * as k8s from "@kubernetes/client-node";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { runOperator } from "../../src/cli/run.js";
import { freePort } from "../../src/controlplane/controlplane.js";
import { startEmulator } from "../../src/emulator/server.js";
import { controller } from "../../src/runtime/controller.js";
import { KubeClient } from "../../src/runtime/kube.js";
import { LEASES } from "../../src/runtime/leader-election.js";
import { microTime } from "../../src/runtime/lease.js";
import type { Manager } from "../../src/runtime/manager.js";
import { installCrds } from "../support/crds.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { operatorEntry } from "../support/operator-process.js";
import { GIZMOS, gizmo, installGizmoCrd } from "../support/test-crd.js";

const root = resolve(import.meta.dirname, "../..");
const API_KEY = "do-not-print-this-key";

/**
 * `aidc-operator run ...` as a child process, src/ through tsx (the bundle the image
 * runs: operator-bundle.test.ts).
 */
function operatorProcess(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [...operatorEntry(), "run", ...args], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      // Required; no test here reaches the service.
      AIDC_SERVICE_BASE_URL: "https://aidc.invalid",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const out = { stdout: "", stderr: "" };
  child.stdout?.on("data", (d) => {
    out.stdout += d;
  });
  child.stderr?.on("data", (d) => {
    out.stderr += d;
  });
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  return { child, out, exited };
}

describe("aidc-operator run", () => {
  const kc = adminKubeConfig();
  let namespace = "";
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    await installGizmoCrd(kc);
    // The registered controllers watch the operator's kinds: /readyz waits for them.
    await installCrds(kc);
    namespace = await createNamespace(kc, "operator-run");
    return () => {
      for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
    };
  });

  it("stops at start with one message naming a bad config field", async () => {
    const { child, out, exited } = operatorProcess(["--metrics-port", "0"], {
      AIDC_API_KEY: API_KEY,
      AIDC_SERVICE_BASE_URL: "not-a-url",
    });
    children.push(child);
    expect(await exited).toBe(1);
    expect(out.stderr.trim()).toMatch(
      /^aidc-operator: invalid operator config: service\.baseUrl: .*\(from AIDC_SERVICE_BASE_URL\)$/,
    );
    expect(out.stdout + out.stderr).not.toContain(API_KEY);
  });

  it("serves probes and metrics, holds the Lease, and on SIGTERM exits 0 after releasing it", async () => {
    const port = await freePort();
    const { child, out, exited } = operatorProcess(
      [
        "--kubeconfig",
        inject("kubeconfigPath"),
        "--leader-elect",
        "--lease-name",
        "run-test",
        "--lease-namespace",
        namespace,
        "--metrics-port",
        String(port),
      ],
      { AIDC_API_KEY: API_KEY, POD_NAME: "operator-0" },
    );
    children.push(child);
    const base = `http://127.0.0.1:${port}`;
    await eventually(async () => (await fetch(`${base}/readyz`)).status === 200, 60_000);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect(await (await fetch(`${base}/metrics`)).text()).toContain(
      "leader_election_master_status",
    );
    const kube = new k8s.KubeConfig();
    kube.loadFromFile(inject("kubeconfigPath"));
    const leases = kube.makeApiClient(k8s.CoordinationV1Api);
    const held = await eventually(async () => {
      const lease = await leases.readNamespacedLease({ name: "run-test", namespace });
      return lease.spec?.holderIdentity;
    });
    expect(held).toMatch(/^operator-0_/);

    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    const after = await leases.readNamespacedLease({ name: "run-test", namespace });
    expect(after.spec?.holderIdentity).toBeUndefined();
    const lines = out.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { msg: string });
    expect(lines.map((l) => l.msg)).toEqual(
      expect.arrayContaining(["starting aidc-operator", "released the lease", "manager stopped"]),
    );
    expect(out.stdout + out.stderr).not.toContain(API_KEY);
  });

  it("starts the registered controllers with the config's concurrency and stops with exit code 0", async () => {
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    await custom.createNamespacedCustomObject({
      ...GIZMOS,
      namespace,
      body: gizmo(namespace, "run-a"),
    });
    const dir = await mkdtemp(join(tmpdir(), "aidc-run-"));
    const config = join(dir, "config.yaml");
    await writeFile(
      config,
      `watchNamespaces: [${namespace}]\nconcurrency:\n  gizmos: 3\nserver:\n  port: 0\n  host: 127.0.0.1\nlog:\n  level: silent\n`,
    );
    const reconciled: string[] = [];
    let bindings: Record<string, unknown> = {};
    let watched: string[] = [];
    let manager: Manager | undefined;
    let stop: () => void = () => undefined;
    const code = runOperator({
      configFile: config,
      kubeconfig: inject("kubeconfigPath"),
      // No service call is made: the controllers here are the test's own.
      env: { AIDC_API_KEY: API_KEY, AIDC_SERVICE_BASE_URL: "https://aidc.invalid" },
      stopSignal: new Promise<void>((r) => {
        stop = r;
      }),
      onStarted: (m) => {
        manager = m;
      },
      controllerFactories: [
        ({ config: c }) =>
          controller("gizmos")
            .for(GIZMOS)
            .reconcile(async (key, ctx) => {
              reconciled.push(`${key.namespace}/${key.name}`);
              bindings = ctx.log.bindings();
              watched = c.watchNamespaces;
              return {};
            }),
      ],
    });
    await eventually(async () => reconciled.includes(`${namespace}/run-a`));
    expect(bindings).toMatchObject({ controller: "gizmos", key: `${namespace}/run-a` });
    expect(bindings.reconcileId).toMatch(/^[0-9a-f-]{36}$/);
    expect(watched).toEqual([namespace]);
    const metrics = await manager?.metrics.text();
    expect(metrics).toContain(
      'controller_runtime_max_concurrent_reconciles{controller="gizmos"} 12',
    );
    const lease = await manager?.kube.get(LEASES, { namespace, name: "aidc-operator-leader" });
    expect(lease).toBeUndefined();
    stop();
    expect(await code).toBe(0);
    expect(manager?.running).toBe(false);
  });

  it("calls the service nothing and exports no operation verdict while another replica holds the Lease, and probes the operations once it leads", async () => {
    const emulator = await startEmulator({ apiKey: API_KEY });
    const kube = new KubeClient(kc);
    const lease = { namespace, name: "standby-test" };
    const now = microTime(new Date());
    await kube.create(LEASES, {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: lease,
      spec: {
        holderIdentity: "another-replica",
        leaseDurationSeconds: 3600,
        acquireTime: now,
        renewTime: now,
      },
    });
    let manager: Manager | undefined;
    let stop: () => void = () => undefined;
    const code = runOperator({
      kubeconfig: inject("kubeconfigPath"),
      env: {
        AIDC_API_KEY: API_KEY,
        AIDC_SERVICE_BASE_URL: emulator.url,
        AIDC_SERVICE_ALLOW_INSECURE_HTTP: "true",
        AIDC_LOG_LEVEL: "silent",
      },
      flags: {
        "watch-namespaces": namespace,
        "leader-elect": true,
        "lease-name": lease.name,
        "lease-namespace": namespace,
        "metrics-port": "0",
      },
      stopSignal: new Promise<void>((r) => {
        stop = r;
      }),
      onStarted: (m) => {
        manager = m;
      },
    });
    try {
      // A standby, its informers synced, a second on (the Lease tried every retry period).
      await eventually(async () => manager?.cache.kinds().every((k) => k.synced), 60_000);
      await new Promise((r) => setTimeout(r, 1_000));
      expect(manager?.isLeader()).toBe(false);
      const calls = () => emulator.requestLog.read().map((r) => `${r.method} ${r.path}`);
      expect(calls()).toEqual([]);
      // Nor does it export verdicts (-1, unknown) beside the leader's (a missing
      // operation's alert takes the min over the replicas).
      const verdicts = async () =>
        (await manager?.metrics.text())?.match(/^aidc_service_operation_available\{.*$/gm) ?? [];
      expect(await verdicts()).toEqual([]);

      // The other replica gives the Lease up: this one leads, and probes.
      await kube.delete(LEASES, lease);
      await eventually(async () => manager?.isLeader() === true, 30_000);
      await eventually(async () => calls().includes("GET /v1/volumes/aidc-operator-probe"));
      await eventually(async () => (await verdicts()).some((line) => line.endsWith(" 1")));
    } finally {
      stop();
      expect(await code).toBe(0);
      await emulator.stop();
    }
  });
});
