import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { beforeEach, describe, expect, it } from "vitest";
import { emulatorPerFile, serviceFailure } from "../../test/support/service-contract.js";
import { freePort } from "../controlplane/controlplane.js";
import type { EmulatedService } from "../emulator/harness.js";
import { ServiceClient, type ServiceClientOptions } from "./client.js";
import {
  ServiceAuthError,
  ServiceInvalidIdError,
  ServiceMalformedResponseError,
  ServiceUnavailableError,
} from "./errors.js";
import type { RequestObservation } from "./transport-options.js";

let svc: EmulatedService;
let nasId: string;

/** A client whose attempts and backoffs are recorded; backoffs do not really wait. */
function observedClient(extra: Partial<ServiceClientOptions> = {}) {
  const attempts: RequestObservation[] = [];
  const sleeps: number[] = [];
  const client = svc.newClient({
    retry: { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 5000 },
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    onRequest: (e) => attempts.push(e),
    ...extra,
  });
  return { client, attempts, sleeps };
}

const subscribe = (c: ServiceClient) => c.subscribeNas({ productCode: "nas.fixed.200" });

emulatorPerFile({}, (started) => {
  svc = started;
});
beforeEach(async () => {
  nasId = (await svc.admin.seed({ nas: [{ name: "n" }] })).nas[0] as string;
});

describe("retries of idempotent calls", () => {
  it("retry a 500 envelope with backoff and jitter, then succeed", async () => {
    svc.emulator.faults.set([{ kind: "error", endpoint: "getNas", times: 2 }]);
    const { client, attempts, sleeps } = observedClient();
    expect((await client.getNas(nasId)).id).toBe(nasId);
    expect(attempts.map((a) => a.code)).toEqual([500, 500, 200]);
    expect(sleeps).toEqual([50, 100]);
  });

  it("give up after the last attempt with a retryable error", async () => {
    svc.emulator.faults.set([{ kind: "error", endpoint: "getNas" }]);
    const { client, attempts } = observedClient();
    const err = await serviceFailure(client.getNas(nasId));
    expect(err).toBeInstanceOf(ServiceUnavailableError);
    expect(attempts).toHaveLength(3);
  });

  it("retry a dropped connection and a malformed body", async () => {
    svc.emulator.faults.set([
      { kind: "drop", endpoint: "getNas", times: 1 },
      { kind: "malformed", endpoint: "listNas", times: 1 },
    ]);
    const { client, attempts } = observedClient();
    await client.getNas(nasId);
    await client.listNas();
    expect(attempts.map((a) => a.code)).toEqual(["error", 200, 200, 200]);
  });

  it.each(["node-http", "node-fetch"] as const)(
    "wait at least the Retry-After of a 429 (over %s)",
    async (httpClient) => {
      svc.emulator.faults.set([
        { kind: "rateLimit", endpoint: "getNas", times: 1, retryAfterSeconds: 2 },
      ]);
      const { client, attempts, sleeps } = observedClient({ httpClient });
      await client.getNas(nasId);
      expect(attempts.map((a) => a.code)).toEqual([429, 200]);
      expect(sleeps).toEqual([2000]);
    },
  );

  it("do not retry a terminal refusal", async () => {
    const { client, attempts } = observedClient();
    await serviceFailure(client.getNas("nas-404"));
    expect(attempts).toHaveLength(1);
  });
});

describe.each(["node-http", "node-fetch"] as const)("a create over %s", (httpClient) => {
  it("is never re-sent after a 500: one request, outcome unknown", async () => {
    svc.emulator.faults.set([{ kind: "error", endpoint: "subscribeNas", times: 1 }]);
    const { client } = observedClient({ httpClient });
    const err = await serviceFailure(subscribe(client));
    expect(err).toMatchObject({ retryable: true, outcomeUnknown: true });
    expect(svc.emulator.requestLog.read({ endpoint: "subscribeNas" })).toHaveLength(1);
  });

  it("is never re-sent after a dropped connection or a malformed answer", async () => {
    svc.emulator.faults.set([
      { kind: "drop", endpoint: "createTrainingTask", times: 1 },
      { kind: "malformed", endpoint: "subscribeNas", times: 1 },
    ]);
    const { client } = observedClient({ httpClient });
    const dropped = await serviceFailure(
      client.createTrainingTask({
        name: "t",
        createType: "DIRECT",
        productCode: "train.cpu.16",
        workerCount: 1,
        image: "i",
      }),
    );
    expect(dropped).toMatchObject({ outcomeUnknown: true });
    expect(await serviceFailure(subscribe(client))).toBeInstanceOf(ServiceMalformedResponseError);
    expect(svc.emulator.requestLog.read({ method: "POST" })).toHaveLength(2);
  });

  it("is never re-sent after a timeout", async () => {
    svc.emulator.faults.set([{ kind: "latency", endpoint: "scaleNas", latencyMs: 300 }]);
    const { client } = observedClient({ timeoutMs: 80, httpClient });
    const err = await serviceFailure(client.scaleNas(nasId, { scaleType: "ScaleUp", capacity: 1 }));
    expect(err.message).toMatch(/timed out after 80 ms/);
    expect(err).toMatchObject({ outcomeUnknown: true, retryable: true });
    // The emulator logs a request when it answers, after the injected latency.
    await new Promise((r) => setTimeout(r, 400));
    expect(svc.emulator.requestLog.read({ endpoint: "scaleNas" })).toHaveLength(1);
  });

  it("is sent again after a 429, which the service answers before doing anything", async () => {
    svc.emulator.faults.set([{ kind: "rateLimit", endpoint: "subscribeNas", times: 1 }]);
    const { client } = observedClient({ httpClient });
    expect(await subscribe(client)).toMatch(/^sub-nas-/);
    expect(svc.emulator.requestLog.read({ endpoint: "subscribeNas" })).toHaveLength(2);
  });

  it("is sent again when the connection was refused (nothing reached the service)", async () => {
    const attempts: RequestObservation[] = [];
    const client = new ServiceClient({
      baseUrl: `http://127.0.0.1:${await freePort()}`,
      apiKey: () => svc.apiKey,
      rateLimit: null,
      retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
      httpClient,
      onRequest: (e) => attempts.push(e),
    });
    const err = await serviceFailure(subscribe(client));
    expect(err).toMatchObject({ retryable: true, outcomeUnknown: false });
    expect(err.message).toMatch(/ECONNREFUSED/);
    expect(attempts).toHaveLength(3);
    client.close();
  });
});

describe.each(["node-http", "node-fetch"] as const)("timeouts over %s", (httpClient) => {
  it("abort a slow read and retry it", async () => {
    // The retried read must answer within the timeout too, also on a loaded machine.
    svc.emulator.faults.set([{ kind: "latency", endpoint: "getNas", latencyMs: 1_000, times: 1 }]);
    const { client, attempts } = observedClient({ timeoutMs: 400, httpClient });
    expect((await client.getNas(nasId)).id).toBe(nasId);
    expect(attempts.map((a) => a.code)).toEqual(["error", 200]);
    // The emulator logs the aborted read when it answers it, after the latency: waited
    // for here, so that it lands in no later test's request log.
    while (svc.emulator.requestLog.read({ endpoint: "getNas" }).length < 2) {
      await new Promise((r) => setTimeout(r, 20));
    }
  });
});

describe("the API key", () => {
  it("is read for every request, so a rotated Secret takes effect at once", async () => {
    let key = svc.apiKey;
    const client = svc.newClient({ apiKey: () => key, catalogTtlMs: 0 });
    await client.listNasProducts();
    svc.emulator.setApiKey("rotated-key-0123456789");
    expect(await serviceFailure(client.listNasProducts())).toBeInstanceOf(ServiceAuthError);
    key = "rotated-key-0123456789";
    await client.listNasProducts();
    const [entry] = svc.emulator.requestLog.read({ endpoint: "listNasProducts" });
    expect(entry?.authorized).toBe(true);
  });

  it("that cannot be read fails as an auth error without a request", async () => {
    const client = svc.newClient({
      apiKey: () => {
        throw new Error("secret aidc/api-key has no key 'token'");
      },
    });
    const err = await serviceFailure(client.listNasProducts());
    expect(err).toBeInstanceOf(ServiceAuthError);
    expect(err.message).toMatch(/could not be read: secret aidc\/api-key has no key 'token'/);
    expect(svc.emulator.requestLog.read()).toHaveLength(0);
  });

  it("is sent as a bearer token", async () => {
    const seen: string[] = [];
    const client = svc.newClient({
      apiKey: async () => {
        seen.push("read");
        return svc.apiKey;
      },
    });
    await client.listTrainingProducts();
    expect(seen).toEqual(["read"]);
    expect(svc.emulator.requestLog.read()[0]?.authorized).toBe(true);
  });

  it("told by its owner is sent without asking for it, until the owner tells another", async () => {
    let asked = 0;
    const client = svc.newClient({
      apiKey: () => {
        asked++;
        return "a-key-the-service-refuses";
      },
      catalogTtlMs: 0,
    });
    client.useApiKey(svc.apiKey);
    await client.listNasProducts();
    client.useApiKey("rotated-key-0123456789");
    expect(await serviceFailure(client.listNasProducts())).toBeInstanceOf(ServiceAuthError);
    svc.emulator.setApiKey("rotated-key-0123456789");
    await client.listNasProducts();
    expect(asked).toBe(0);
    expect(svc.emulator.requestLog.read().map((r) => r.authorized)).toEqual([true, false, true]);
  });
});

describe("the metrics hook", () => {
  it("reports endpoint, method, status and duration of every attempt", async () => {
    const { client, attempts } = observedClient();
    await client.getNas(nasId);
    await serviceFailure(client.getNas("nas-404"));
    const any = {
      durationMs: expect.any(Number),
      rateLimitWaitMs: expect.any(Number),
      priority: "normal",
    };
    expect(attempts).toEqual([
      { endpoint: "getNas", method: "GET", code: 200, ...any },
      { endpoint: "getNas", method: "GET", code: 404, ...any },
    ]);
  });
});

describe("service.httpClient", () => {
  it("speaks through node:http by default and through node-fetch when asked, each sending the User-Agent", async () => {
    const agents: (string | undefined)[] = [];
    const server = createServer((req, res) => {
      agents.push(`${req.headers["user-agent"]}; ${req.headers["accept-encoding"] ?? "-"}`);
      res.writeHead(404, { "Content-Type": "application/json" });
      res.end('{"status":404,"message":"not found","data":null}');
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      for (const httpClient of [undefined, "node-fetch", "node-http"] as const) {
        const client = new ServiceClient({
          baseUrl,
          apiKey: () => "k",
          rateLimit: null,
          retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
          ...(httpClient ? { httpClient, userAgent: `ua/${httpClient}` } : {}),
        });
        await client.getNas("nas-000001").catch(() => undefined);
        client.close();
      }
      // node-fetch asks for compressed answers of its own accord; Node's http module does not.
      expect(agents).toEqual([
        "aidc-operator; -",
        "ua/node-fetch; gzip, deflate, br",
        "ua/node-http; -",
      ]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe("a call's path", () => {
  it("is checked before anything is sent", async () => {
    const client = svc.newClient();
    const err = await serviceFailure(client.getNas("../tasks"));
    expect(err).toBeInstanceOf(ServiceInvalidIdError);
    expect(svc.emulator.requestLog.read()).toHaveLength(0);
  });
});

describe("the client's log lines", () => {
  it("name one component: the caller's (service), else service-client, never both", async () => {
    const lines: string[] = [];
    const root = pino({ level: "debug" }, { write: (line: string) => lines.push(line) });
    await svc.newClient({ logger: root.child({ component: "service" }) }).getNas(nasId);
    await svc.newClient({ logger: root }).getNas(nasId);
    const components = lines.map((l) => l.match(/"component":"[^"]*"/g));
    expect(components).toEqual([['"component":"service"'], ['"component":"service-client"']]);
  });
});
