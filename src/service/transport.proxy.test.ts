import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServiceClient } from "./client.js";
import { ServiceError } from "./errors.js";
import type { RequestObservation } from "./transport-options.js";

let proxy: Server;
let proxyPort = 0;
let connects = 0;

/** A loopback proxy that refuses every tunnel for want of credentials. */
beforeAll(async () => {
  proxy = createServer((_req, res) => res.writeHead(405).end());
  proxy.on("connect", (_req, socket) => {
    connects += 1;
    socket.end(
      'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="corp"\r\n\r\n',
    );
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  proxyPort = (proxy.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => proxy.close(() => resolve())));

describe.each(["node-http", "node-fetch"] as const)(
  "a proxy refusing the tunnel, over %s",
  (httpClient) => {
    it("fails a create as not sent (it is sent again), saying the proxy's answer and never its password", async () => {
      connects = 0;
      const attempts: RequestObservation[] = [];
      const client = new ServiceClient({
        baseUrl: "https://svc.example.test",
        apiKey: () => "key-0123456789abcdef",
        rateLimit: null,
        retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
        httpClient,
        proxyFor: () => `http://corp:Pr0xyPa55@127.0.0.1:${proxyPort}`,
        onRequest: (e) => attempts.push(e),
      });
      const err = await client.subscribeNas({ productCode: "nas.fixed.200" }).then(
        () => undefined,
        (e: unknown) => e,
      );
      client.close();
      expect(err).toBeInstanceOf(ServiceError);
      expect(err).toMatchObject({ retryable: true, outcomeUnknown: false });
      expect((err as Error).message).toBe(
        `POST /v1/subscription/nasStorage/create failed: network error (the proxy http://127.0.0.1:${proxyPort} of HTTPS_PROXY refused the tunnel: it answered 407 to CONNECT (its user and password in HTTPS_PROXY are missing or wrong))`,
      );
      expect((err as Error).message).not.toMatch(/Pr0xyPa55|corp:/);
      expect(attempts).toHaveLength(3);
      expect(connects).toBe(3);
    });

    it("says a proxy it cannot reach is the proxy, by its address without the password", async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      const client = new ServiceClient({
        baseUrl: "https://svc.example.test",
        apiKey: () => "key-0123456789abcdef",
        rateLimit: null,
        retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 },
        httpClient,
        proxyFor: () => `http://corp:Pr0xy%40Pa55@127.0.0.1:${port}`,
      });
      const err = await client.subscribeNas({ productCode: "nas.fixed.200" }).then(
        () => undefined,
        (e: unknown) => e,
      );
      client.close();
      expect(err).toMatchObject({ retryable: true, outcomeUnknown: false });
      expect((err as Error).message).toBe(
        `POST /v1/subscription/nasStorage/create failed: network error (the proxy http://127.0.0.1:${port} of HTTPS_PROXY cannot be reached: connect ECONNREFUSED 127.0.0.1:${port})`,
      );
    });

    it("says a proxy answering an http:// call 407 refused its user and password, the create not sent", async () => {
      const plain = createServer((_req, res) =>
        res.writeHead(407, { "proxy-authenticate": 'Basic realm="corp"' }).end(),
      );
      await new Promise<void>((resolve) => plain.listen(0, "127.0.0.1", resolve));
      const port = (plain.address() as AddressInfo).port;
      const client = new ServiceClient({
        baseUrl: "http://svc.example.test",
        apiKey: () => "key-0123456789abcdef",
        rateLimit: null,
        retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 2 },
        httpClient,
        proxyFor: () => `http://corp:Pr0xyPa55@127.0.0.1:${port}`,
      });
      const err = await client.subscribeNas({ productCode: "nas.fixed.200" }).catch((e) => e);
      client.close();
      plain.close();
      expect(err).toMatchObject({ retryable: true, outcomeUnknown: false });
      expect((err as Error).message).toBe(
        `POST /v1/subscription/nasStorage/create failed: network error (the proxy http://127.0.0.1:${port} of HTTP_PROXY refused the request: it answered 407 (its user and password in HTTP_PROXY are missing or wrong))`,
      );
    });
  },
);
