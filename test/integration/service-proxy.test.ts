import { Writable } from "node:stream";
import { getCACertificates, setDefaultCACertificates } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import { KubeClient } from "../../src/runtime/kube.js";
import { ConnectProxy } from "../support/connect-proxy.js";
import { installCrds } from "../support/crds.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { ObjectsOf } from "../support/managed.js";
import { TEST_API_KEY } from "../support/operator.js";
import { runInProcessWith } from "../support/run-operator.js";
import { TlsFront } from "../support/tls-front.js";

const NAS_SPEC = { productCode: "nas.capacity.standard", capacityGB: 100 };
/** A name no DNS knows: only the proxy reaches it (it maps the name to the TLS front). */
const SERVICE_HOST = "svc.aidc.test";
const PROXY_USER = "aidc:proxy-Pa55word";

function linesInto(lines: string[]): Writable {
  return new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
}

describe("the service's calls through the environment's proxy (HTTPS_PROXY, NO_PROXY)", () => {
  const kc = adminKubeConfig();
  let emulator: RunningEmulator;
  let front: TlsFront;
  let proxy: ConnectProxy;
  let namespace = "";
  let nas: ObjectsOf;

  const proxyUrl = () => `http://${PROXY_USER}@${new URL(proxy.url).host}`;
  const baseUrl = () => `https://${SERVICE_HOST}:${front.port}`;
  const run = (env: Record<string, string>, httpClient = "node-http", lines?: string[]) =>
    runInProcessWith(
      {
        service: { baseUrl: baseUrl(), httpClient },
        watchNamespaces: [namespace],
        pollIntervalMs: { default: 500 },
        server: { port: 0, host: "127.0.0.1" },
        log: { level: lines ? "debug" : "silent" },
      },
      {
        controllerFactories: [nasVolumeController],
        env: { AIDC_API_KEY: TEST_API_KEY, ...env },
        ...(lines ? { logDestination: linesInto(lines) } : {}),
      },
    );

  beforeAll(async () => {
    await installCrds(kc);
    namespace = await createNamespace(kc, "service-proxy");
    nas = new ObjectsOf(new KubeClient(kc), nasVolumeCrd, namespace);
    emulator = await startEmulator({ apiKey: TEST_API_KEY, subscriptionDelayMs: 100 });
    front = new TlsFront(SERVICE_HOST, Number(new URL(emulator.url).port));
    await front.start();
    // The operator trusts the front as a pod trusts a service's CA (NODE_EXTRA_CA_CERTS).
    setDefaultCACertificates([...getCACertificates("default"), front.ca.toString()]);
    proxy = new ConnectProxy({ [SERVICE_HOST]: "127.0.0.1" }, PROXY_USER);
    await proxy.start();
  });
  afterAll(async () => {
    await proxy?.stop();
    await front?.stop();
    await emulator?.stop();
  });

  for (const httpClient of ["node-http", "node-fetch"]) {
    it(`makes a NasVolume Ready with the service reachable only through HTTPS_PROXY (${httpClient})`, async () => {
      proxy.reset();
      const op = await run({ HTTPS_PROXY: proxyUrl() }, httpClient);
      try {
        const name = `through-${httpClient}`;
        await nas.create(name, NAS_SPEC);
        await nas.waitForCondition(name, "Ready", "True", undefined, 60_000);
        expect(proxy.targets).toContain(`${SERVICE_HOST}:${front.port}`);
        // The proxy's user and password went as Proxy-Authorization: nothing refused.
        expect(proxy.refused).toBe(0);
      } finally {
        expect(await op.stop()).toBe(0);
      }
    });
  }

  it("calls the service directly when NO_PROXY names it, and logs neither key nor proxy password", async () => {
    proxy.reset();
    const lines: string[] = [];
    const op = await run({ https_proxy: proxyUrl(), NO_PROXY: ".aidc.test" }, "node-http", lines);
    try {
      const name = "bypassed";
      await nas.create(name, NAS_SPEC);
      // Direct, the name resolves nowhere: the call fails there, never at the proxy.
      const obj = await nas.waitFor(
        name,
        (o) => JSON.stringify(o.status ?? {}).includes("ENOTFOUND"),
        60_000,
      );
      expect(obj).toBeDefined();
      expect(proxy.targets).toEqual([]);
    } finally {
      expect(await op.stop()).toBe(0);
    }
    const log = lines.join("");
    expect(log).toContain(SERVICE_HOST);
    expect(log).not.toContain(TEST_API_KEY);
    expect(log).not.toContain("proxy-Pa55word");
  });

  it("refuses to start when the service's proxy is one its calls cannot take (socks5), naming neither URL nor password", async () => {
    const started = run({ HTTPS_PROXY: `socks5://${PROXY_USER}@127.0.0.1:1` });
    await expect(started).rejects.toThrow(
      /^the proxy of the service \(HTTPS_PROXY\): unsupported proxy scheme "socks5"/,
    );
    await expect(started).rejects.not.toThrow(/Pa55word|127\.0\.0\.1:1/);
  });
});
