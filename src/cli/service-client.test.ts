import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { operatorConfigSchema } from "../config/schema.js";
import { connectionClient } from "../controllers/connections/client.js";
import { environmentProxy } from "../runtime/kube-proxy.js";
import { createLogger } from "../runtime/logging.js";
import { RuntimeMetrics } from "../runtime/metrics.js";
import { operatorUserAgent } from "../runtime/user-agent.js";
import type { ServiceClient } from "../service/client.js";
import { ServiceProxyError } from "../service/service-proxy.js";
import { createServiceClient, reportServiceOperations } from "./service-client.js";

const seen: { userAgent?: string; acceptEncoding?: string }[] = [];
const server = createServer((req, res) => {
  seen.push({
    ...(req.headers["user-agent"] ? { userAgent: req.headers["user-agent"] } : {}),
    ...(req.headers["accept-encoding"] ? { acceptEncoding: req.headers["accept-encoding"] } : {}),
  });
  res.writeHead(200, { "Content-Type": "application/json" });
  res.end('{"status":404,"message":"not found","data":null}');
});
let baseUrl = "";
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/**
 * The headers that tell one call of `client` apart: the operator's User-Agent either way,
 * and node-fetch asks for compressed answers of its own accord (Node's http does not).
 */
async function headersOf(client: ServiceClient) {
  seen.length = 0;
  await client.getNas("nas-000001").catch(() => undefined);
  client.close();
  return seen[0];
}

describe("the operator's service.httpClient", () => {
  it.each([
    ["unset (node-http)", undefined, undefined],
    ["node-http", "node-http", undefined],
    ["node-fetch", "node-fetch", "gzip, deflate, br"],
  ] as const)(
    "%s is what the default client and every connection's speak",
    async (_label, httpClient, acceptEncoding) => {
      const config = operatorConfigSchema.parse({
        service: {
          baseUrl,
          allowInsecureHttp: true,
          rateLimit: null,
          ...(httpClient ? { httpClient } : {}),
        },
      });
      const defaultClient = createServiceClient({
        config,
        apiKey: async () => "key-0123456789",
        log: pino({ level: "silent" }),
      });
      const connection = connectionClient(config, {
        name: "team-a",
        baseUrl,
        rateLimit: undefined,
        apiKey: async () => "key-0123456789",
      });
      const want = {
        userAgent: operatorUserAgent(),
        ...(acceptEncoding ? { acceptEncoding } : {}),
      };
      expect(await headersOf(defaultClient)).toEqual(want);
      expect(await headersOf(connection)).toEqual(want);
    },
  );
});

describe("the proxy of the operator's service", () => {
  it("stops the start naming HTTPS_PROXY when its password is not percent-encoded, never quoting it", () => {
    const config = operatorConfigSchema.parse({ service: { baseUrl: "https://svc.example.com" } });
    const start = () =>
      createServiceClient({
        config,
        apiKey: async () => "key-0123456789",
        log: pino({ level: "silent" }),
        proxyFor: environmentProxy({ HTTPS_PROXY: "http://aidc:50%off@proxy.example.com:3128" }),
      });
    expect(start).toThrow(
      'the proxy of the service (HTTPS_PROXY): the proxy\'s user or password is not percent-encoded: write "%" as "%25"',
    );
    expect(start).toThrow(ServiceProxyError);
  });
});

describe("the log of the service's operations", () => {
  it('says that an operation answers again only after it was found missing, and that one is missing without a "no longer" it may not have had', async () => {
    const lines: { level: string; msg: string; operation?: string }[] = [];
    const log = createLogger({
      destination: new Writable({
        write(chunk, _enc, done) {
          lines.push(JSON.parse(String(chunk)));
          done();
        },
      }),
    });
    const config = operatorConfigSchema.parse({
      service: { baseUrl, allowInsecureHttp: true, rateLimit: null },
    });
    const client = createServiceClient({
      config,
      apiKey: async () => "key-0123456789",
      log,
    });
    reportServiceOperations(client, new RuntimeMetrics({ processMetrics: false }), log);
    await vi.waitFor(() => expect(lines.map((l) => l.msg)).toContain("service operations probed"));
    lines.length = 0;
    // The first answer of an operation no probe asked: nothing was missing.
    client.operations.record("subscribeNas", "present");
    expect(lines).toEqual([]);
    client.operations.record("subscribeNas", "missing");
    client.operations.record("subscribeNas", "present");
    // Missing at its first answer: the line says so without a "no longer".
    client.operations.record("scaleNas", "missing");
    client.close();
    const missing = "the service does not answer an operation; orders that need it are refused";
    expect(lines.map(({ level, msg, operation }) => ({ level, msg, operation }))).toEqual([
      { level: "warn", msg: missing, operation: "subscribeNas" },
      { level: "info", msg: "the service answers an operation again", operation: "subscribeNas" },
      { level: "warn", msg: missing, operation: "scaleNas" },
    ]);
  });
});
