/**
 * The service's and the object storage's calls through a socks5 proxy (an `ssh -D`
 * tunnel, a dante egress): the name goes to the proxy, which alone resolves it; its
 * user:password authenticates (RFC 1929) and is never said; the tunnels are kept alive;
 * a refused handshake is a call not sent, so a create is sent again.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { getCACertificates, setDefaultCACertificates } from "node:tls";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SocksProxy } from "../../test/support/socks-proxy.js";
import { TlsFront } from "../../test/support/tls-front.js";
import { type EmulatedService, startEmulatedService } from "../emulator/harness.js";
import { ServiceError } from "./errors.js";
import { ObjectStorageClient } from "./object-storage.js";
import type { RequestObservation } from "./transport-options.js";

/** Names no DNS knows: only the proxy maps them (to the TLS fronts on loopback). */
const SERVICE_HOST = "svc.aidc.test";
const S3_HOST = "s3.aidc.test";
const PASSWORD = "S0cksPa55word";
const LIST =
  '<?xml version="1.0" encoding="UTF-8"?><ListAllMyBucketsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Owner><ID>o</ID></Owner><Buckets></Buckets></ListAllMyBucketsResult>';

let svc: EmulatedService;
let s3: Server;
let front: TlsFront;
let s3Front: TlsFront;
let proxy: SocksProxy;
const defaultCAs = getCACertificates("default");

/** The proxy's URL with `password`, as the resolver hands it over (socks5h is socks5 there). */
const proxyUrl = (password = PASSWORD) =>
  proxy.url.replace("socks5://", `socks5://aidc:${password}@`);

beforeAll(async () => {
  svc = await startEmulatedService({ emulator: { keepAliveTimeoutMs: 5_000 } });
  s3 = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "Content-Type": "application/xml" }).end(LIST));
  });
  await new Promise<void>((resolve) => s3.listen(0, "127.0.0.1", resolve));
  front = new TlsFront(SERVICE_HOST, Number(new URL(svc.emulator.url).port));
  s3Front = new TlsFront(S3_HOST, (s3.address() as AddressInfo).port);
  await Promise.all([front.start(), s3Front.start()]);
  // Trusted as a pod trusts them from NODE_EXTRA_CA_CERTS.
  setDefaultCACertificates([...defaultCAs, front.ca.toString(), s3Front.ca.toString()]);
  proxy = new SocksProxy(
    { [SERVICE_HOST]: "127.0.0.1", [S3_HOST]: "127.0.0.1" },
    `aidc:${PASSWORD}`,
  );
  await proxy.start();
});
afterAll(async () => {
  setDefaultCACertificates(defaultCAs);
  await proxy?.stop();
  await front?.stop();
  await s3Front?.stop();
  s3?.closeAllConnections();
  await new Promise((resolve) => s3?.close(resolve));
  await svc?.stop();
});

const reset = () => {
  proxy.tunnels = 0;
  proxy.targets.length = 0;
};

describe.each(["node-http", "node-fetch"] as const)("a socks5 proxy, over %s", (httpClient) => {
  const newClient = (password?: string, extra: Parameters<EmulatedService["newClient"]>[0] = {}) =>
    svc.newClient({
      baseUrl: `https://${SERVICE_HOST}:${front.port}`,
      httpClient,
      proxyFor: () => proxyUrl(password),
      ...extra,
    });

  it("carries the calls to a name only the proxy resolves, several on one tunnel", async () => {
    reset();
    const client = newClient();
    for (let i = 0; i < 3; i++) {
      await client.listNasProducts();
      await client.subscribeNas({ productCode: "nas.fixed.200" });
    }
    // The name went to the proxy, never resolved here (it resolves nowhere).
    expect(new Set(proxy.targets)).toEqual(new Set([`${SERVICE_HOST}:${front.port}`]));
    expect(proxy.tunnels).toBeGreaterThan(0);
    expect(proxy.tunnels).toBeLessThan(6);
  });

  it("lets an answer slower than the idle bound arrive: only idle tunnels are closed", async () => {
    const client = newClient(undefined, { idleSocketTimeoutMs: 100 });
    svc.emulator.faults.set([{ kind: "latency", endpoint: "subscribeNas", latencyMs: 400 }]);
    try {
      await expect(client.subscribeNas({ productCode: "nas.fixed.200" })).resolves.toEqual(
        expect.any(String),
      );
    } finally {
      svc.emulator.faults.clear();
    }
  });

  it("fails a create the proxy refuses (a wrong password) as not sent: it is sent again, the password never said", async () => {
    reset();
    const attempts: RequestObservation[] = [];
    const client = newClient("wrong-Pa55word", { onRequest: (e) => attempts.push(e) });
    const err = await client.subscribeNas({ productCode: "nas.fixed.200" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ServiceError);
    expect(err).toMatchObject({ retryable: true, outcomeUnknown: false });
    // The proxy and the setting it came from, as an http(s) proxy's failure names them.
    expect((err as Error).message).toBe(
      `POST /v1/subscription/nasStorage/create failed: network error (the proxy socks5://127.0.0.1:${new URL(proxy.url).port} of HTTPS_PROXY refused the tunnel: Socks5 Authentication failed)`,
    );
    expect((err as Error).message).not.toMatch(/Pa55word|aidc:/);
    // Nor in the error as the log writes it (its causes' messages included).
    expect(JSON.stringify(pino.stdSerializers.err(err as Error))).not.toMatch(/Pa55word/);
    expect(attempts).toHaveLength(3);
    expect(proxy.tunnels).toBe(0);
  });
});

it("reaches a socks5 proxy named by its IPv6 address", async () => {
  const v6 = new SocksProxy({ [SERVICE_HOST]: "127.0.0.1" });
  await v6.start("::1");
  try {
    const client = svc.newClient({
      baseUrl: `https://${SERVICE_HOST}:${front.port}`,
      proxyFor: () => v6.url,
    });
    expect(v6.url).toMatch(/^socks5:\/\/\[::1\]:\d+$/);
    await client.listNasProducts();
    expect(v6.targets).toEqual([`${SERVICE_HOST}:${front.port}`]);
  } finally {
    await v6.stop();
  }
});

it("checks an https service's certificate against its IP address through the tunnel, not against localhost", async () => {
  const byIp = new TlsFront("127.0.0.1", Number(new URL(svc.emulator.url).port));
  const byName = new TlsFront("localhost", Number(new URL(svc.emulator.url).port));
  await Promise.all([byIp.start(), byName.start()]);
  setDefaultCACertificates([...defaultCAs, front.ca, s3Front.ca, byIp.ca, byName.ca].map(String));
  const client = (f: TlsFront) =>
    svc.newClient({ baseUrl: `https://127.0.0.1:${f.port}`, proxyFor: () => proxyUrl() });
  try {
    // A certificate for the address alone (IP SAN) is the service's.
    await expect(client(byIp).listNasProducts()).resolves.toEqual(expect.any(Array));
    // One for localhost is not, though 127.0.0.1 is where localhost points.
    await expect(client(byName).listNasProducts()).rejects.toThrow(/ERR_TLS_CERT_ALTNAME_INVALID/);
  } finally {
    setDefaultCACertificates([...defaultCAs, front.ca.toString(), s3Front.ca.toString()]);
    await Promise.all([byIp.stop(), byName.stop()]);
  }
});

describe("the object storage through a socks5 proxy", () => {
  it("reaches an https endpoint only the proxy resolves, several calls on one tunnel", async () => {
    reset();
    const client = new ObjectStorageClient({
      endpoint: `https://${S3_HOST}:${s3Front.port}`,
      region: "us-east-1",
      credentials: async () => ({ accessKeyId: "AKIDTEST", secretAccessKey: "secret-test-key" }),
      proxyFor: () => proxyUrl(),
    });
    try {
      for (let i = 0; i < 4; i++) expect(await client.listBuckets()).toEqual([]);
    } finally {
      client.close();
    }
    expect(new Set(proxy.targets)).toEqual(new Set([`${S3_HOST}:${s3Front.port}`]));
    expect(proxy.tunnels).toBe(1);
  });

  it("fails a create the proxy refuses (a wrong password) as not sent, naming the proxy and HTTPS_PROXY, never the password", async () => {
    reset();
    const client = new ObjectStorageClient({
      endpoint: `https://${S3_HOST}:${s3Front.port}`,
      region: "us-east-1",
      credentials: async () => ({ accessKeyId: "AKIDTEST", secretAccessKey: "secret-test-key" }),
      proxyFor: () => proxyUrl("wrong-Pa55word"),
    });
    const err = await client.createBucket("logs").catch((e: unknown) => e);
    client.close();
    expect(err).toMatchObject({ retryable: true, outcomeUnknown: false });
    expect((err as Error).message).toBe(
      `S3 CreateBucket of bucket logs: no answer (the proxy socks5://127.0.0.1:${new URL(proxy.url).port} of HTTPS_PROXY refused the tunnel: Socks5 Authentication failed)`,
    );
    expect(JSON.stringify(pino.stdSerializers.err(err as Error))).not.toMatch(/Pa55word/);
    expect(proxy.tunnels).toBe(0);
  });
});
