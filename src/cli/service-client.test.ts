import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { operatorConfigSchema } from "../config/schema.js";
import { connectionClient } from "../controllers/connections/client.js";
import type { ServiceClient } from "../service/client.js";
import { createServiceClient } from "./service-client.js";

const agents: (string | undefined)[] = [];
const server = createServer((req, res) => {
  agents.push(req.headers["user-agent"]);
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

/** The User-Agent of one call of `client` (node-fetch names itself; Node's http sends none). */
async function userAgentOf(client: ServiceClient): Promise<string | undefined> {
  agents.length = 0;
  await client.getNas("nas-000001").catch(() => undefined);
  client.close();
  return agents[0];
}

describe("the operator's service.httpClient", () => {
  it.each([
    ["unset (node-http)", undefined, undefined],
    ["node-http", "node-http", undefined],
    ["node-fetch", "node-fetch", "node-fetch"],
  ] as const)(
    "%s is what the default client and every connection's speak",
    async (_label, httpClient, agent) => {
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
      expect(await userAgentOf(defaultClient)).toBe(agent);
      expect(await userAgentOf(connection)).toBe(agent);
    },
  );
});
