import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { generateCerts } from "../../src/controlplane/certs.js";
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
  let tlsProxy: ConnectProxy;
  let tlsProxyCa: Buffer;
  let dir = "";

  beforeAll(async () => {
    await installCrds(kc);
    emulator = await startEmulator({ apiKey: TEST_API_KEY, subscriptionDelayMs: 100 });
    front = new TlsFront(SERVICE_HOST, Number(new URL(emulator.url).port));
    await front.start();
    proxy = new ConnectProxy({ [SERVICE_HOST]: "127.0.0.1" }, `corp:${PROXY_PASSWORD}`);
    await proxy.start();
    dir = await mkdtemp(join(tmpdir(), "service-proxy-process-"));
    // An https:// proxy whose certificate a private CA signed (for 127.0.0.1).
    const certs = await generateCerts(await mkdtemp(join(dir, "proxy-")));
    const [key, cert, ca] = await Promise.all(
      [certs.serverKey, certs.serverCert, certs.caCert].map((f) => readFile(f)),
    );
    tlsProxyCa = ca as Buffer;
    const hosts = { [SERVICE_HOST]: "127.0.0.1" };
    tlsProxy = new ConnectProxy(hosts, `corp:${PROXY_PASSWORD}`, {
      key: key as Buffer,
      cert: cert as Buffer,
    });
    await tlsProxy.start();
  });
  afterAll(async () => {
    await proxy?.stop();
    await tlsProxy?.stop();
    await front?.stop();
    await emulator?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ["an http:// proxy", () => ({ through: proxy, cas: [front.ca] })],
    [
      "an https:// proxy of a private CA",
      () => ({ through: tlsProxy, cas: [front.ca, tlsProxyCa] }),
    ],
  ])(
    "makes a NasVolume Ready, every service call through %s, logging neither key nor proxy password",
    async (label, setup) => {
      const { through, cas } = setup();
      const namespace = await createNamespace(kc, "service-proxy-process");
      const logFile = join(dir, `${namespace}.log`);
      const caFile = join(dir, `${namespace}-ca.pem`);
      await writeFile(caFile, Buffer.concat(cas.flatMap((c) => [c, Buffer.from("\n")])));
      const proxyUrl = new URL(through.url);
      proxyUrl.username = "corp";
      proxyUrl.password = PROXY_PASSWORD;
      const op = startOperatorProcess({
        kubeconfig: inject("kubeconfigPath"),
        serviceBaseUrl: `https://${SERVICE_HOST}:${front.port}`,
        apiKey: TEST_API_KEY,
        metricsPort: await freePort(),
        env: {
          AIDC_WATCH_NAMESPACES: namespace,
          AIDC_POLL_INTERVAL_MS: "500",
          AIDC_LOG_LEVEL: "debug",
          HTTPS_PROXY: proxyUrl.href,
          NODE_EXTRA_CA_CERTS: caFile,
        },
        logFile,
      });
      try {
        await op.waitReady();
        const nas = new ObjectsOf(new KubeClient(kc), nasVolumeCrd, namespace);
        await nas.create("behind-proxy", { productCode: "nas.capacity.standard", capacityGB: 100 });
        await nas.waitForCondition("behind-proxy", "Ready", "True", undefined, 60_000);
        expect(through.targets, label).toContain(`${SERVICE_HOST}:${front.port}`);
        expect(through.refused).toBe(0);
      } finally {
        await op.stop();
      }
      const log = await readFile(logFile, "utf8");
      expect(log).toContain(SERVICE_HOST);
      expect(log).not.toContain(TEST_API_KEY);
      expect(log).not.toContain(PROXY_PASSWORD);
    },
  );
});
