import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { operatorConfigSchema } from "../../config/schema.js";
import { operatorUserAgent } from "../../runtime/user-agent.js";
import { connectionClient } from "./client.js";

describe("connectionClient", () => {
  it("names the operator in every call's User-Agent, as its Kubernetes requests do", async () => {
    const agents: (string | undefined)[] = [];
    const server = createServer((req, res) => {
      agents.push(req.headers["user-agent"]);
      res.writeHead(404, { "Content-Type": "application/json" });
      res.end('{"status":404,"message":"not found","data":null}');
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const config = operatorConfigSchema.parse({ service: { baseUrl, allowInsecureHttp: true } });
    const client = connectionClient(config, {
      name: "team-a",
      baseUrl,
      rateLimit: undefined,
      apiKey: async () => "k",
    });
    try {
      await client.getNas("nas-000001").catch(() => undefined);
      expect(agents).toEqual([operatorUserAgent()]);
      expect(agents[0]).toMatch(/^aidc-operator\/\S+ \(\w+\/\w+\) \S+$/);
    } finally {
      client.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
