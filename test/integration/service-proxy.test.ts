import { getCACertificates, setDefaultCACertificates } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bucketController } from "../../src/controllers/bucket/controller.js";
import { serviceConnectionController } from "../../src/controllers/connections/controller.js";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { bucketCrd } from "../../src/crds/bucket.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { serviceConnectionCrd } from "../../src/crds/serviceconnection.js";
import { EmulatorAdmin } from "../../src/emulator/admin-client.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import { KubeClient } from "../../src/runtime/kube.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { linesInto } from "../support/captured-log.js";
import { ConnectProxy } from "../support/connect-proxy.js";
import { installCrds } from "../support/crds.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { ObjectsOf } from "../support/managed.js";
import { TEST_API_KEY } from "../support/operator.js";
import { runInProcessWith } from "../support/run-operator.js";
import { startTestS3, type TestS3 } from "../support/s3.js";
import { SocksProxy } from "../support/socks-proxy.js";
import { TlsFront } from "../support/tls-front.js";
import { createConnection } from "../support/two-teams.js";

const NAS_SPEC = { productCode: "nas.capacity.standard", capacityGB: 100 };
/** Names no DNS knows: only the proxy reaches them (it maps them to the TLS fronts). */
const SERVICE_HOST = "svc.aidc.test";
const S3_HOST = "s3.aidc.test";
/** The service under a second name (a front of its own), for a ServiceConnection. */
const OTHER_HOST = "other.aidc.test";
const PROXY_USER = "aidc:proxy-Pa55word";

/** Deletes the ServiceConnection `name`, its finalizer taken off (the operator is stopped). */
async function removeConnection(kube: KubeClient, name: string): Promise<void> {
  const key = { namespace: "", name };
  await kube
    .patch(serviceConnectionCrd, key, { metadata: { finalizers: null } })
    .catch(() => undefined);
  await kube.delete(serviceConnectionCrd, key).catch(() => undefined);
}

describe("the service's calls through the environment's proxy (HTTPS_PROXY, NO_PROXY)", () => {
  const kc = adminKubeConfig();
  let emulator: RunningEmulator;
  let front: TlsFront;
  let s3: TestS3;
  let s3Front: TlsFront;
  let proxy: ConnectProxy;
  let socks: SocksProxy;
  let otherFront: TlsFront;
  let namespace = "";
  let nas: ObjectsOf;
  let buckets: ObjectsOf;

  const proxyUrl = () => `http://${PROXY_USER}@${new URL(proxy.url).host}`;
  const socksUrl = (scheme: string) => `${scheme}://${PROXY_USER}@${new URL(socks.url).host}`;
  const baseUrl = () => `https://${SERVICE_HOST}:${front.port}`;
  const s3Url = () => `https://${S3_HOST}:${s3Front.port}`;
  const run = (
    env: Record<string, string>,
    httpClient = "node-http",
    lines?: string[],
    s3Endpoint = s3Url(),
  ) =>
    runInProcessWith(
      {
        service: { baseUrl: baseUrl(), httpClient },
        objectStorage: { ...s3.config, endpoint: s3Endpoint },
        watchNamespaces: [namespace],
        connections: { secretNamespace: namespace },
        pollIntervalMs: { default: 500 },
        server: { port: 0, host: "127.0.0.1" },
        log: { level: lines ? "debug" : "silent" },
      },
      {
        controllerFactories: [nasVolumeController, bucketController, serviceConnectionController],
        env: { AIDC_API_KEY: TEST_API_KEY, ...env },
        ...(lines ? { logDestination: linesInto(lines) } : {}),
      },
    );

  beforeAll(async () => {
    await installCrds(kc);
    namespace = await createNamespace(kc, "service-proxy");
    nas = new ObjectsOf(new KubeClient(kc), nasVolumeCrd, namespace);
    buckets = new ObjectsOf(new KubeClient(kc), bucketCrd, namespace);
    emulator = await startEmulator({ apiKey: TEST_API_KEY, subscriptionDelayMs: 100 });
    front = new TlsFront(SERVICE_HOST, Number(new URL(emulator.url).port));
    await front.start();
    s3 = await startTestS3();
    s3Front = new TlsFront(S3_HOST, Number(new URL(s3.server.url).port));
    await s3Front.start();
    // The operator trusts the fronts as a pod trusts the service's CA (NODE_EXTRA_CA_CERTS).
    otherFront = new TlsFront(OTHER_HOST, Number(new URL(emulator.url).port));
    await otherFront.start();
    const fronts = [front.ca.toString(), s3Front.ca.toString(), otherFront.ca.toString()];
    setDefaultCACertificates([...getCACertificates("default"), ...fronts]);
    const hosts = { [SERVICE_HOST]: "127.0.0.1", [S3_HOST]: "127.0.0.1" };
    proxy = new ConnectProxy(hosts, PROXY_USER, undefined, true);
    await proxy.start();
    socks = new SocksProxy({ ...hosts, [OTHER_HOST]: "127.0.0.1" }, PROXY_USER);
    await socks.start();
  });
  afterAll(async () => {
    await proxy?.stop();
    await socks?.stop();
    await front?.stop();
    await s3Front?.stop();
    await otherFront?.stop();
    await s3?.stop();
    await emulator?.stop();
  });

  for (const httpClient of ["node-http", "node-fetch"]) {
    const what = httpClient === "node-http" ? "a NasVolume and a Bucket" : "a NasVolume";
    it(`makes ${what} Ready, the service and the object storage reachable only through HTTPS_PROXY (${httpClient})`, async () => {
      proxy.reset();
      const op = await run({ HTTPS_PROXY: proxyUrl() }, httpClient);
      try {
        const name = `through-${httpClient}`;
        await nas.create(name, NAS_SPEC);
        await nas.waitForCondition(name, "Ready", "True", undefined, 60_000);
        expect(proxy.targets).toContain(`${SERVICE_HOST}:${front.port}`);
        if (httpClient === "node-http") {
          // The S3 client's calls too (its agents are the service client's kind).
          const bucket = `proxied-${namespace}`;
          await buckets.create(bucket, { versioning: "Enabled" });
          await buckets.waitForCondition(bucket, "Ready", "True", undefined, 60_000);
          expect(await s3.client().getVersioning(bucket)).toBe("Enabled");
          expect(proxy.targets).toContain(`${S3_HOST}:${s3Front.port}`);
        }
        // The proxy's user and password went as Proxy-Authorization: nothing refused.
        expect(proxy.refused).toBe(0);
      } finally {
        expect(await op.stop()).toBe(0);
      }
    });
  }

  it("sends a ServiceConnection's calls through the proxy too, on tunnels kept alive", async () => {
    proxy.reset();
    const kube = new KubeClient(kc);
    const conn = `proxied-${namespace}`;
    const since = (await new EmulatorAdmin(emulator.url).requests()).at(-1)?.seq ?? 0;
    const op = await run({ HTTPS_PROXY: proxyUrl() });
    try {
      await createConnection(kube, {
        secret: { namespace, name: "proxied-key" },
        apiKey: TEST_API_KEY,
        name: conn,
        baseUrl: baseUrl(),
        allowed: namespace,
      });
      const conns = new ObjectsOf(kube, serviceConnectionCrd, "");
      await conns.waitForCondition(conn, "Ready", "True", "Connected", 60_000);
      await nas.create("through-connection", { ...NAS_SPEC, connectionRef: { name: conn } });
      await nas.waitForCondition("through-connection", "Ready", "True", undefined, 60_000);
      const calls = (await new EmulatorAdmin(emulator.url).requests({ since })).length;
      const tunnels = proxy.targets.filter((t) => t.startsWith(`${SERVICE_HOST}:`)).length;
      // Each client's keep-alive sockets carry several calls per tunnel.
      expect(tunnels).toBeGreaterThan(0);
      expect(tunnels).toBeLessThan(calls);
    } finally {
      expect(await op.stop()).toBe(0);
      await removeConnection(kube, conn);
    }
  });

  it("sends an http:// object storage's calls to HTTP_PROXY in absolute form", async () => {
    proxy.reset();
    const plain = `http://${S3_HOST}:${new URL(s3.server.url).port}`;
    const op = await run(
      { HTTPS_PROXY: proxyUrl(), HTTP_PROXY: proxyUrl() },
      "node-http",
      undefined,
      plain,
    );
    try {
      const bucket = `plain-${namespace}`;
      await buckets.create(bucket, { versioning: "Enabled" });
      await buckets.waitForCondition(bucket, "Ready", "True", undefined, 60_000);
      expect(await s3.client().getVersioning(bucket)).toBe("Enabled");
      expect(proxy.targets).toContain(new URL(plain).host);
      expect(proxy.refused).toBe(0);
    } finally {
      expect(await op.stop()).toBe(0);
    }
  });

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

  it("makes a NasVolume and a Bucket Ready, the service and the object storage reachable only through a socks5h proxy, its password logged nowhere", async () => {
    socks.tunnels = 0;
    socks.targets.length = 0;
    const lines: string[] = [];
    const op = await run({ HTTPS_PROXY: socksUrl("socks5h") }, "node-http", lines);
    try {
      await nas.create("through-socks", NAS_SPEC);
      await nas.waitForCondition("through-socks", "Ready", "True", undefined, 60_000);
      const bucket = `socks-${namespace}`;
      await buckets.create(bucket, { versioning: "Enabled" });
      await buckets.waitForCondition(bucket, "Ready", "True", undefined, 60_000);
      expect(await s3.client().getVersioning(bucket)).toBe("Enabled");
      // The names went to the proxy, which alone resolves them.
      expect(socks.targets).toContain(`${SERVICE_HOST}:${front.port}`);
      expect(socks.targets).toContain(`${S3_HOST}:${s3Front.port}`);
    } finally {
      expect(await op.stop()).toBe(0);
    }
    expect(lines.join("")).not.toContain("proxy-Pa55word");
  });

  it("sends a ServiceConnection's calls through a socks5 proxy, on tunnels kept alive", async () => {
    socks.tunnels = 0;
    socks.targets.length = 0;
    const kube = new KubeClient(kc);
    const conn = `socks-${namespace}`;
    const since = (await new EmulatorAdmin(emulator.url).requests()).at(-1)?.seq ?? 0;
    // The default connection goes direct (NO_PROXY): only the ServiceConnection's calls go to the proxy.
    const op = await run({
      HTTPS_PROXY: socksUrl("socks5"),
      NO_PROXY: `${SERVICE_HOST},${S3_HOST}`,
    });
    try {
      await createConnection(kube, {
        secret: { namespace, name: "socks-key" },
        apiKey: TEST_API_KEY,
        name: conn,
        baseUrl: `https://${OTHER_HOST}:${otherFront.port}`,
        allowed: namespace,
      });
      const conns = new ObjectsOf(kube, serviceConnectionCrd, "");
      await conns.waitForCondition(conn, "Ready", "True", "Connected", 60_000);
      await nas.create("socks-user", { ...NAS_SPEC, connectionRef: { name: conn } });
      await nas.waitForCondition("socks-user", "Ready", "True", undefined, 60_000);
      const calls = (await new EmulatorAdmin(emulator.url).requests({ since })).length;
      expect(new Set(socks.targets)).toEqual(new Set([`${OTHER_HOST}:${otherFront.port}`]));
      expect(socks.tunnels).toBeGreaterThan(0);
      expect(socks.tunnels).toBeLessThan(calls);
    } finally {
      expect(await op.stop()).toBe(0);
      await removeConnection(kube, conn);
    }
  });

  it("holds a ServiceConnection whose proxy's scheme is none the operator speaks (socks4://), and the objects using it, as ProxyUnsupported, naming the variable and the scheme", async () => {
    const kube = new KubeClient(kc);
    const conn = `socks4-${namespace}`;
    const lines: string[] = [];
    // The default connection goes direct (NO_PROXY): only the ServiceConnection's calls would take the proxy.
    const op = await run(
      {
        HTTPS_PROXY: `socks4://${PROXY_USER}@127.0.0.1:1080`,
        NO_PROXY: `${SERVICE_HOST},${S3_HOST}`,
      },
      "node-http",
      lines,
    );
    try {
      await createConnection(kube, {
        secret: { namespace, name: "socks4-key" },
        apiKey: TEST_API_KEY,
        name: conn,
        baseUrl: `https://${OTHER_HOST}:${otherFront.port}`,
        allowed: namespace,
      });
      const conns = new ObjectsOf(kube, serviceConnectionCrd, "");
      /** Condition `type` of `obj`. */
      const condition = (obj: KubeObject, type: string) =>
        (obj.status as { conditions: { type: string; message: string }[] }).conditions.find(
          (c) => c.type === type,
        );
      const unsupported =
        'the proxy of the service (HTTPS_PROXY): unsupported proxy scheme "socks4": http, https or socks5';
      const ready = await conns.waitForCondition(
        conn,
        "Ready",
        "False",
        "ProxyUnsupported",
        30_000,
      );
      expect(condition(ready, "Ready")?.message).toContain(unsupported);
      await nas.create("socks4-user", { ...NAS_SPEC, connectionRef: { name: conn } });
      const held = await nas.waitForCondition(
        "socks4-user",
        "Synced",
        "False",
        "ProxyUnsupported",
        30_000,
      );
      expect(condition(held, "Synced")?.message).toBe(unsupported);
      expect(condition(held, "Stalled")).toMatchObject({
        status: "True",
        reason: "ProxyUnsupported",
      });
    } finally {
      expect(await op.stop()).toBe(0);
      await removeConnection(kube, conn);
    }
    expect(lines.join("")).not.toContain("proxy-Pa55word");
  });
});
