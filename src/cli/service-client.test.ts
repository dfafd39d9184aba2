import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { operatorConfigSchema } from "../config/schema.js";
import { connectionClient } from "../controllers/connections/client.js";
import { operatorUserAgent } from "../runtime/user-agent.js";
import type { ServiceClient } from "../service/client.js";
import { createServiceClient } from "./service-client.js";

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
        onRequest: () => undefined,
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
