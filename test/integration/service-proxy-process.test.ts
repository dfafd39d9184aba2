import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { freePort } from "../../src/controlplane/controlplane.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import { KubeClient } from "../../src/runtime/kube.js";
import { ConnectProxy } from "../support/connect-proxy.js";
import { installCrds } from "../support/crds.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { ObjectsOf } from "../support/managed.js";
import { TEST_API_KEY } from "../support/operator.js";
import { startOperatorProcess } from "../support/operator-process.js";
import { TlsFront } from "../support/tls-front.js";

const SERVICE_HOST = "svc.aidc.test";
const PROXY_PASSWORD = "proc-Pa55word";

/**
 * `aidc-operator run` as a pod behind a corporate proxy runs it: the service reachable
 * only through HTTPS_PROXY (a name only the proxy maps), its certificate signed by a
 * private CA the process trusts from NODE_EXTRA_CA_CERTS (the chart's extraEnv and
 * extraVolumes), the Kubernetes API direct (loopback).
 */
describe("an operator process behind HTTPS_PROXY, trusting a private CA from NODE_EXTRA_CA_CERTS", () => {
  const kc = adminKubeConfig();
  let emulator: RunningEmulator;
  let front: TlsFront;
  let proxy: ConnectProxy;
  let dir = "";

  beforeAll(async () => {
    await installCrds(kc);
    emulator = await startEmulator({ apiKey: TEST_API_KEY, subscriptionDelayMs: 100 });
    front = new TlsFront(SERVICE_HOST, Number(new URL(emulator.url).port));
    await front.start();
    proxy = new ConnectProxy({ [SERVICE_HOST]: "127.0.0.1" }, `corp:${PROXY_PASSWORD}`);
    await proxy.start();
    dir = await mkdtemp(join(tmpdir(), "service-proxy-process-"));
  });
  afterAll(async () => {
    await proxy?.stop();
    await front?.stop();
    await emulator?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("makes a NasVolume Ready, every service call through the proxy, logging neither key nor proxy password", async () => {
    const namespace = await createNamespace(kc, "service-proxy-process");
    const logFile = join(dir, "operator.log");
    const op = startOperatorProcess({
      kubeconfig: inject("kubeconfigPath"),
      serviceBaseUrl: `https://${SERVICE_HOST}:${front.port}`,
      apiKey: TEST_API_KEY,
      metricsPort: await freePort(),
      env: {
        AIDC_WATCH_NAMESPACES: namespace,
        AIDC_POLL_INTERVAL_MS: "500",
        AIDC_LOG_LEVEL: "debug",
        HTTPS_PROXY: `http://corp:${PROXY_PASSWORD}@${new URL(proxy.url).host}`,
        NODE_EXTRA_CA_CERTS: front.caFile,
      },
      logFile,
    });
    try {
      await op.waitReady();
      const nas = new ObjectsOf(new KubeClient(kc), nasVolumeCrd, namespace);
      await nas.create("behind-proxy", { productCode: "nas.capacity.standard", capacityGB: 100 });
      await nas.waitForCondition("behind-proxy", "Ready", "True", undefined, 60_000);
      expect(proxy.targets).toContain(`${SERVICE_HOST}:${front.port}`);
      expect(proxy.refused).toBe(0);
    } finally {
      await op.stop();
    }
    const log = await readFile(logFile, "utf8");
    expect(log).toContain(SERVICE_HOST);
    expect(log).not.toContain(TEST_API_KEY);
    expect(log).not.toContain(PROXY_PASSWORD);
  });
});
