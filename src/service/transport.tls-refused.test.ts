/**
 * A call whose TLS handshake failed on a certificate (the service's, the object
 * storage's, or an https:// proxy's: one not trusted, one for another name) sent
 * nothing: a create it failed is a plain retry, not a create of unknown outcome.
 */
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConnectProxy, startHttpsConnectProxy } from "../../test/support/connect-proxy.js";
import { TlsFront } from "../../test/support/tls-front.js";
import { freePort } from "../controlplane/controlplane.js";
import { ServiceClient } from "./client.js";
import { ObjectStorageClient } from "./object-storage.js";

/** A front no client trusts (its certificate is self-signed), for "localhost" alone. */
let front: TlsFront;
let proxy: ConnectProxy;

beforeAll(async () => {
  front = new TlsFront("localhost", await freePort());
  await front.start();
  ({ proxy } = await startHttpsConnectProxy(tmpdir()));
});
afterAll(async () => {
  await front?.stop();
  await proxy?.stop();
});

const cases = () => [
  { what: "a service certificate not trusted", url: `https://localhost:${front.port}` },
  { what: "a certificate for another name", url: `https://127.0.0.1:${front.port}` },
  { what: "an https proxy's certificate not trusted", url: "https://svc.example.test", proxy },
];

describe.each(["node-http", "node-fetch"] as const)("the service client over %s", (httpClient) => {
  it("fails a create refused on a certificate as not sent", async () => {
    for (const c of cases()) {
      const client = new ServiceClient({
        baseUrl: c.url,
        apiKey: () => "key-0123456789abcdef",
        rateLimit: null,
        retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 2 },
        httpClient,
        ...(c.proxy ? { proxyFor: () => c.proxy.url } : {}),
      });
      const err = await client.subscribeNas({ productCode: "nas.fixed.200" }).catch((e) => e);
      client.close();
      expect(err, c.what).toMatchObject({ retryable: true, outcomeUnknown: false });
    }
  });
});

it("the S3 client fails a create refused on a certificate as not sent", async () => {
  for (const c of cases()) {
    const client = new ObjectStorageClient({
      endpoint: c.url,
      region: "us-east-1",
      credentials: async () => ({ accessKeyId: "AKIDTEST", secretAccessKey: "secret-test-key" }),
      ...(c.proxy ? { proxyFor: () => c.proxy.url } : {}),
    });
    const err = await client.createBucket("logs").catch((e: unknown) => e);
    client.close();
    expect(err, c.what).toMatchObject({ retryable: true, outcomeUnknown: false });
  }
});
