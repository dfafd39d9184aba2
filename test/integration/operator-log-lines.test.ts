import { mkdtemp, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../src/controlplane/controlplane.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import { KubeClient } from "../../src/runtime/kube.js";
import { LEASES } from "../../src/runtime/leader-election.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { installCrds } from "../support/crds.js";
import { buildImageLayout, type ImageLayout } from "../support/image-layout.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { conditionOf } from "../support/managed.js";
import { adminAccess, writeKubeconfig } from "../support/network-operator.js";
import { TEST_API_KEY } from "../support/operator.js";
import { tokenAccount } from "../support/service-account-tokens.js";
import { SocksProxy } from "../support/socks-proxy.js";
import { TcpProxy } from "../support/tcp-proxy.js";

/**
 * What a log system that parses one JSON object per line, and alerts on warn and error,
 * reads of the operator as the image runs it (test/support/image-layout.ts): its service
 * account's token and CA read from files as in a pod, the API server addressed by an IP
 * address (as every pod's 10.96.0.1) and reached through a SOCKS5 proxy with a password
 * (`ssh -D` to a bastion, and a TLS server name set to that address), at debug level.
 */
describe("the lines the operator writes", () => {
  const admin = adminKubeConfig();
  const kube = new KubeClient(admin);
  let image: ImageLayout;
  let emulator: RunningEmulator;
  let namespace = "";
  let dir = "";

  beforeAll(async () => {
    await installCrds(admin);
    namespace = await createNamespace(admin, "log-lines");
    emulator = await startEmulator({ apiKey: TEST_API_KEY, subscriptionDelayMs: 300 });
    image = await buildImageLayout();
    dir = await mkdtemp(join(image.dir, "files-"));
    return async () => {
      await image.remove();
      await emulator.stop();
    };
  }, 180_000);

  it("are each one JSON object, on stdout and stderr alike, none warn or error from start to a SIGTERM's exit 0; no secret at debug", async () => {
    const account = await tokenAccount(admin, namespace, "log-lines");
    const password = "s0cks-l0g-pa55";
    const socks = new SocksProxy({}, `aidc:${password}`);
    await socks.start();
    try {
      const token = await account.mint("log-lines-token");
      const tokenFile = join(dir, "token");
      const caFile = join(dir, "ca.crt");
      await writeFile(tokenFile, token);
      await writeFile(caFile, adminAccess(admin).ca ?? "");
      const server = adminAccess(admin).server;
      expect(new URL(server).hostname).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
      const proxyUrl = `socks5://aidc:${password}@127.0.0.1:${new URL(socks.url).port}`;
      const kubeconfig = await writeKubeconfig(
        join(dir, "kubeconfig"),
        {
          pod: {
            server,
            proxyUrl,
            fields: { cluster: { "certificate-authority": caFile }, user: { tokenFile } },
          },
        },
        "pod",
      );
      const port = await freePort();
      const flags = ["--kubeconfig", kubeconfig, "--watch-namespaces", namespace, "--leader-elect"];
      const op = image.start(["run", ...flags, "--lease-namespace", namespace], {
        AIDC_API_KEY: TEST_API_KEY,
        AIDC_SERVICE_BASE_URL: emulator.url,
        AIDC_SERVICE_ALLOW_INSECURE_HTTP: "true",
        AIDC_METRICS_PORT: String(port),
        AIDC_LOG_LEVEL: "debug",
        AIDC_POLL_INTERVAL_MS: "1000",
        POD_NAME: "log-lines-0",
      });
      const output = () => `${op.out.stdout}${op.out.stderr}`;
      await eventually(
        async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200,
        60_000,
      ).catch((err: Error) => {
        throw new Error(`${err.message}; its output:\n${output().slice(-3_000)}`);
      });
      const name = "logged";
      await kube.create<KubeObject>(nasVolumeCrd, {
        apiVersion: `${nasVolumeCrd.group}/${nasVolumeCrd.version}`,
        kind: nasVolumeCrd.kind,
        metadata: { name, namespace },
        spec: { productCode: "nas.capacity.standard", capacityGB: 100, mountPath: "/data/l" },
      });
      await eventually(async () => {
        const obj = await kube.get<KubeObject>(nasVolumeCrd, { namespace, name });
        return conditionOf(obj, "Ready")?.status === "True";
      }, 60_000);
      // Steady: the Ready object is polled (every second here) a few times over.
      const polls = () => op.out.stdout.split(`"key":"${namespace}/${name}"`).length;
      const ready = polls();
      await eventually(async () => polls() >= ready + 5, 60_000);
      expect(socks.tunnels).toBeGreaterThan(0);
      op.child.kill("SIGTERM");
      expect(await op.exited).toBe(0);

      type Line = { level?: string; msg?: string; notJson?: string };
      const parse = (text: string) =>
        text
          .split("\n")
          .filter((l) => l !== "")
          .map((line): Line => {
            try {
              return JSON.parse(line) as Line;
            } catch {
              return { notJson: line };
            }
          });
      const parsed = [...parse(op.out.stdout), ...parse(op.out.stderr)];
      expect(parsed.filter((l) => l.notJson !== undefined)).toEqual([]);
      expect(parsed.filter((l) => l.level === "warn" || l.level === "error")).toEqual([]);
      expect(parse(op.out.stdout).at(-1)?.msg).toBe("manager stopped");
      const text = output();
      for (const secret of [TEST_API_KEY, password, token]) expect(text).not.toContain(secret);
      // A replica waiting for the Lease takes it at its next try: it was released.
      const lease = await kube.get(LEASES, { namespace, name: "aidc-operator-leader" });
      const spec = lease?.spec as { holderIdentity?: string; leaseDurationSeconds?: number };
      expect(spec).toMatchObject({ leaseDurationSeconds: 1 });
      expect(spec.holderIdentity).toBeUndefined();
    } finally {
      await socks.stop();
      await account.cleanup();
    }
  }, 150_000);

  it("end in 'manager stopped' and exit 0 within the pod's grace period after a SIGTERM while the API server does not answer (a partition)", async () => {
    const access = adminAccess(admin);
    const proxy = new TcpProxy(Number(new URL(access.server).port));
    const server = `https://127.0.0.1:${await proxy.start()}`;
    try {
      const kubeconfig = await writeKubeconfig(
        join(dir, "partitioned"),
        { partitioned: { ...access, server } },
        "partitioned",
      );
      const flags = ["--kubeconfig", kubeconfig, "--watch-namespaces", namespace, "--leader-elect"];
      const op = image.start(
        ["run", ...flags, "--lease-namespace", namespace, "--lease-name", "p"],
        {
          AIDC_API_KEY: TEST_API_KEY,
          AIDC_SERVICE_BASE_URL: emulator.url,
          AIDC_SERVICE_ALLOW_INSECURE_HTTP: "true",
          AIDC_METRICS_PORT: String(await freePort()),
          POD_NAME: "partitioned-0",
        },
      );
      await eventually(async () => op.out.stdout.includes('"msg":"became the leader"'), 60_000);
      proxy.partition();
      op.child.kill("SIGTERM");
      // The chart's terminationGracePeriodSeconds: the pod is killed past it.
      const killed = new Promise((resolve) => setTimeout(() => resolve("killed"), 30_000));
      expect(await Promise.race([op.exited, killed])).toBe(0);
      expect(op.out.stdout).toContain('"msg":"could not release the lease; it will expire"');
      const lines = op.out.stdout.trim().split("\n");
      expect(JSON.parse(lines.at(-1) ?? "{}").msg).toBe("manager stopped");
      expect(op.out.stderr).toBe("");
    } finally {
      await proxy.stop();
    }
  }, 120_000);

  it("exit 0 within the pod's grace period after a SIGTERM while a reconcile hangs and the API server does not answer: the stop's stages share one budget", async () => {
    const access = adminAccess(admin);
    const proxy = new TcpProxy(Number(new URL(access.server).port));
    const server = `https://127.0.0.1:${await proxy.start()}`;
    try {
      const kubeconfig = await writeKubeconfig(
        join(dir, "hung"),
        { hung: { ...access, server } },
        "hung",
      );
      // A service call waits as long as the reconcile may (60 s): the reconcile hangs. A
      // renew deadline past the stop: the Lease is not lost meanwhile (which would abort
      // the reconcile at once), so each stage runs to the end of its share.
      const configFile = join(dir, "hung.yaml");
      await writeFile(
        configFile,
        "service: { timeoutMs: 120000 }\nleaderElection: { leaseDurationMs: 45000, renewDeadlineMs: 40000 }\n",
      );
      const port = await freePort();
      const flags = ["--kubeconfig", kubeconfig, "--watch-namespaces", namespace, "--leader-elect"];
      const op = image.start(
        [
          "run",
          "--config",
          configFile,
          ...flags,
          "--lease-namespace",
          namespace,
          "--lease-name",
          "h",
        ],
        {
          AIDC_API_KEY: TEST_API_KEY,
          AIDC_SERVICE_BASE_URL: emulator.url,
          AIDC_SERVICE_ALLOW_INSECURE_HTTP: "true",
          AIDC_METRICS_PORT: String(port),
          POD_NAME: "hung-0",
        },
      );
      await eventually(
        async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200,
        60_000,
      );
      emulator.faults.set([{ kind: "latency", latencyMs: 90_000 }]);
      await kube.create<KubeObject>(nasVolumeCrd, {
        apiVersion: `${nasVolumeCrd.group}/${nasVolumeCrd.version}`,
        kind: nasVolumeCrd.kind,
        metadata: { name: "hung", namespace },
        spec: { productCode: "nas.capacity.standard", capacityGB: 100, mountPath: "/data/h" },
      });
      const busy = /^controller_runtime_active_workers\{[^}]*\} [1-9]/m;
      await eventually(
        async () => busy.test(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()),
        30_000,
      );
      proxy.partition();
      op.child.kill("SIGTERM");
      // The chart's terminationGracePeriodSeconds: the pod is killed past it.
      const killed = new Promise((resolve) => setTimeout(() => resolve("killed"), 30_000));
      expect(await Promise.race([op.exited, killed])).toBe(0);
      expect(op.out.stdout).toContain(
        '"msg":"reconciles still running after the shutdown bound; aborting them"',
      );
      const lines = op.out.stdout.trim().split("\n");
      expect(JSON.parse(lines.at(-1) ?? "{}").msg).toBe("manager stopped");
      expect(op.out.stderr).toBe("");
    } finally {
      emulator.faults.clear();
      await proxy.stop();
    }
  }, 120_000);

  it("say why the operator is not ready while the API server cannot be reached at start, once per backoff step, and exit 1 past cacheSyncTimeoutMs so that the pod restarts", async () => {
    const access = adminAccess(admin);
    // A port nothing listens on: every connection is refused.
    const server = `https://127.0.0.1:${await freePort()}`;
    const kubeconfig = await writeKubeconfig(
      join(dir, "unreachable"),
      { unreachable: { ...access, server } },
      "unreachable",
    );
    const configFile = join(dir, "unreachable.yaml");
    await writeFile(configFile, "cacheSyncTimeoutMs: 8000\n");
    const port = await freePort();
    const flags = ["--kubeconfig", kubeconfig, "--watch-namespaces", namespace, "--leader-elect"];
    const op = image.start(
      ["run", "--config", configFile, ...flags, "--lease-namespace", namespace],
      {
        AIDC_API_KEY: TEST_API_KEY,
        AIDC_SERVICE_BASE_URL: emulator.url,
        AIDC_SERVICE_ALLOW_INSECURE_HTTP: "true",
        AIDC_METRICS_PORT: String(port),
        POD_NAME: "unreachable-0",
      },
    );
    // Once every kind's list has failed, /readyz names them with the error.
    const why =
      /^\[-\]informer-sync: not synced: [^;]*nasvolumes\.aidc\.io[^;]* \(connect ECONNREFUSED 127\.0\.0\.1:\d+\)$/m;
    await eventually(async () => {
      const answer = await fetch(`http://127.0.0.1:${port}/readyz`);
      return answer.status === 503 && why.test(await answer.text());
    }, 30_000);
    const exited = new Promise((resolve) => setTimeout(() => resolve("still running"), 60_000));
    expect(await Promise.race([op.exited, exited])).toBe(1);

    type Line = { level?: string; msg?: string };
    const lines = op.out.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Line);
    const said = (level: string, msg: string) =>
      lines.filter((l) => l.level === level && l.msg === msg).length;
    // The cache's report at 1, 3 and 7 s speaks for every kind; the informers' retries,
    // one line per kind and step, are not warnings.
    const reports =
      said("warn", "the cache has not synced; retrying") +
      said("info", "the cache is still listing");
    expect(reports).toBe(3);
    expect(said("warn", "the cache has not synced; retrying")).toBeGreaterThanOrEqual(2);
    expect(said("warn", "list/watch failed; retrying")).toBe(0);
    // Rounds every 2 s: warned at the 1st, 2nd and 4th failure in a row.
    expect(said("warn", "leader election attempt failed")).toBeLessThanOrEqual(3);
    expect(lines.filter((l) => l.level === "error").map((l) => l.msg)).toEqual([
      expect.stringMatching(
        /^the cache did not sync within 8000 ms \(not synced: .*ECONNREFUSED.*\); exiting so that the pod restarts$/,
      ),
      "the manager failed; exiting so that the pod restarts",
    ]);
    expect(lines.at(-1)?.msg).toBe("the manager failed; exiting so that the pod restarts");
    expect(op.out.stderr).toBe("");
  }, 120_000);
});
