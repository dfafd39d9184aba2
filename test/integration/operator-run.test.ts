import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import * as k8s from "@kubernetes/client-node";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { BUNDLE_ENTRY, staticClosure } from "../../scripts/bundle-dist.js";
import { runOperator } from "../../src/cli/run.js";
import { freePort } from "../../src/controlplane/controlplane.js";
import { controller } from "../../src/runtime/controller.js";
import { LEASES } from "../../src/runtime/leader-election.js";
import type { Manager } from "../../src/runtime/manager.js";
import { ConnectProxy } from "../support/connect-proxy.js";
import { installCrds } from "../support/crds.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { buildOperator, IMAGE_NODE_ARGS, operatorEntry } from "../support/operator-process.js";
import { GIZMOS, gizmo, installGizmoCrd } from "../support/test-crd.js";

const root = resolve(import.meta.dirname, "../..");
const API_KEY = "do-not-print-this-key";

/**
 * `aidc-operator run ...` as a child process: tsx from the project, or a compiled
 * entry (`<outDir>/bundle/main.js`).
 */
function operatorProcess(
  args: string[],
  env: Record<string, string>,
  compiledMain?: string,
  nodeArgs: readonly string[] = [],
) {
  const child = spawn(
    process.execPath,
    [...nodeArgs, ...operatorEntry(compiledMain), "run", ...args],
    {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "",
        // Required; no test here reaches the service.
        AIDC_SERVICE_BASE_URL: "https://aidc.invalid",
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
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

  it("runs compiled and bundled (npm run build, as the image is built), through the kubeconfig's proxy-url: ready, then exit 0 on SIGTERM", async () => {
    // Inside the project (.tmp/ is ignored by git), so node_modules and the package's
    // "type": "module" apply as they do to /app/dist in the image.
    await mkdir(join(root, ".tmp"), { recursive: true });
    const outDir = await mkdtemp(join(root, ".tmp", "dist-"));
    const closeAfter: (() => Promise<void>)[] = [];
    try {
      const build = await buildOperator(outDir);
      expect(build.output).toBe("");
      expect(build.exitCode).toBe(0);
      // What the entry loads at start: no emulator, control plane, playground or S3
      // module (chunks of their own, named after them), neither client-node nor the S3
      // client (left to node_modules, imported on demand), and no built-in module as an
      // ES module import (required instead: an imported node:http loads undici).
      const start = staticClosure(join(outDir, BUNDLE_ENTRY));
      expect(start.files.map((f) => basename(f))).toContain("main.js");
      expect(
        start.files.filter((f) => /^(server|controlplane|dev|object-storage)-/.test(basename(f))),
      ).toEqual([]);
      expect(start.bare).toEqual([]);
      // Through a proxy: the bundle loads undici's ProxyAgent on demand, from a chunk of its own.
      const proxy = new ConnectProxy();
      await proxy.start();
      closeAfter.push(() => proxy.stop());
      const proxied = new k8s.KubeConfig();
      proxied.loadFromString(kc.exportConfig());
      proxied.clusters = proxied.clusters.map((c) => ({ ...c, proxyUrl: proxy.url }));
      const kubeconfig = join(outDir, "kubeconfig");
      await writeFile(kubeconfig, proxied.exportConfig());
      const port = await freePort();
      const { child, out, exited } = operatorProcess(
        ["--kubeconfig", kubeconfig, "--metrics-port", String(port)],
        { AIDC_API_KEY: API_KEY, AIDC_WATCH_NAMESPACES: namespace, NODE_ENV: "production" },
        join(outDir, BUNDLE_ENTRY),
        IMAGE_NODE_ARGS,
      );
      children.push(child);
      const base = `http://127.0.0.1:${port}`;
      await eventually(async () => (await fetch(`${base}/readyz`)).status === 200, 60_000).catch(
        (err: Error) => {
          throw new Error(`${err.message}; its last lines:\n${out.stdout.slice(-2_000)}`);
        },
      );
      // The image's Node options keep V8's young generation small once started (2 MiB
      // semi-spaces, a 4 MiB new space; with Node's default it has grown to 32 MiB by then).
      const metrics = await (await fetch(`${base}/metrics`)).text();
      const newSpace = /^nodejs_heap_space_size_total_bytes\{space="new"\} (\d+)/m.exec(metrics);
      expect(Number(newSpace?.[1])).toBeLessThanOrEqual(4 * 1024 * 1024);
      expect(proxy.tunnels).toBeGreaterThan(0);
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      expect(out.stdout).toContain('"msg":"manager stopped"');
      expect(out.stdout + out.stderr).not.toContain(API_KEY);
    } finally {
      for (const close of closeAfter) await close();
      await rm(outDir, { recursive: true, force: true });
    }
  }, 120_000);

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
});
