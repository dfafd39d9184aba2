/**
 * A hostile service cannot take the key elsewhere or cost unbounded memory: redirects
 * are not followed (a second listener on another port, where they point, receives
 * nothing), and huge or endless bodies are cut off at the configured limit.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { emulatorPerFile, serviceFailure } from "../../test/support/service-contract.js";
import { type EmulatedService, HARNESS_API_KEY } from "../emulator/harness.js";
import { isExternalHold } from "../runtime/errors.js";
import type { ServiceClient } from "./client.js";
import { ServiceMalformedResponseError, ServiceRedirectError } from "./errors.js";
import type { ServiceHttpClient } from "./transport-options.js";

let svc: EmulatedService;
let elsewhere: Server;
let elsewhereUrl: string;
const elsewhereRequests: IncomingMessage[] = [];
let nasId: string;

/** Both HTTP clients of the service (`service.httpClient`) hold every case below. */
let httpClient: ServiceHttpClient = "node-http";

function client(extra: Parameters<EmulatedService["newClient"]>[0] = {}): ServiceClient {
  return svc.newClient({
    retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
    httpClient,
    ...extra,
  });
}

emulatorPerFile({}, (started) => {
  svc = started;
});
beforeAll(async () => {
  // The listener a hostile redirect points at: same host, another port.
  elsewhere = createServer((req, res) => {
    elsewhereRequests.push(req);
    res.end('{"status":200,"message":"OK","data":{}}');
  });
  await new Promise<void>((resolve) => elsewhere.listen(0, "127.0.0.1", resolve));
  elsewhereUrl = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`;
});
afterAll(async () => {
  elsewhere.closeAllConnections();
  await new Promise((resolve) => elsewhere.close(resolve));
});
beforeEach(async () => {
  nasId = (await svc.admin.seed({ nas: [{ name: "n" }] })).nas[0] as string;
});
afterEach(() => {
  elsewhereRequests.length = 0;
});

describe.each(["node-http", "node-fetch"] as const)("over %s", (which) => {
  beforeAll(() => {
    httpClient = which;
  });
  describe("a redirect from the service", () => {
    it.each([
      { status: 302, call: (c: ServiceClient) => c.getNas(nasId), endpoint: "getNas" },
      {
        status: 307,
        call: (c: ServiceClient) => c.subscribeNas({ productCode: "nas.fixed.200" }),
        endpoint: "subscribeNas",
      },
      { status: 308, call: (c: ServiceClient) => c.listNas(), endpoint: "listNas" },
    ])("HTTP $status is an error that names the Location, and nothing reaches it", async (c) => {
      const location = `${elsewhereUrl}/steal`;
      svc.emulator.faults.set([{ kind: "redirect", status: c.status, location }]);
      const err = await serviceFailure(c.call(client()));
      expect(err).toBeInstanceOf(ServiceRedirectError);
      expect(err.retryable).toBe(false);
      // Held as the service's (or the configuration's) doing, not the object's: retried slowly.
      expect(isExternalHold(err)).toBe(true);
      expect(err.message).toContain(`HTTP ${c.status}`);
      expect(err.message).toContain(location);
      expect(err.message).toContain("service.baseUrl");
      // An object of a ServiceConnection has its base URL there, not in the configuration.
      expect(err.message).toContain("ServiceConnection, its spec.baseUrl");
      expect(elsewhereRequests).toHaveLength(0);
      // Terminal: one request to the service, none repeated.
      expect(svc.emulator.requestLog.read().filter((e) => e.endpoint === c.endpoint)).toHaveLength(
        1,
      );
    });

    it("a relative Location on the same origin is not followed either", async () => {
      svc.emulator.faults.set([{ kind: "redirect", status: 301, location: "/v1/other", times: 1 }]);
      const err = await serviceFailure(client().getNas(nasId));
      expect(err).toBeInstanceOf(ServiceRedirectError);
      expect(svc.emulator.requestLog.read()).toHaveLength(1);
    });
  });

  describe("a response body larger than the limit", () => {
    it("a 30 MB answer is cut off at the default 4 MiB limit and reported as malformed", async () => {
      svc.emulator.faults.set([{ kind: "oversized", endpoint: "getNas", bodyBytes: 30e6 }]);
      const err = await serviceFailure(
        client({ retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 } }).getNas(nasId),
      );
      expect(err).toBeInstanceOf(ServiceMalformedResponseError);
      expect(err.message).toContain("longer than the limit of 4194304 bytes");
      expect(err.message).toContain("service.maxResponseBytes");
    });

    it("a large answer under the limit is read and judged by its content", async () => {
      svc.emulator.faults.set([{ kind: "oversized", endpoint: "getNas", bodyBytes: 1e6 }]);
      const err = await serviceFailure(client({ maxResponseBytes: 2e6 }).getNas(nasId));
      expect(err).toBeInstanceOf(ServiceMalformedResponseError);
      expect(err.message).not.toContain("longer than the limit");
      expect(err.message).toContain("id");
    });

    it("an endless chunked body is aborted at the limit, long before the timeout", async () => {
      svc.emulator.faults.set([{ kind: "endless", endpoint: "getNas" }]);
      const started = performance.now();
      const err = await serviceFailure(
        client({ maxResponseBytes: 256 * 1024, timeoutMs: 60_000 }).getNas(nasId),
      );
      expect(err).toBeInstanceOf(ServiceMalformedResponseError);
      expect(performance.now() - started).toBeLessThan(30_000);
      // Every attempt hung up: the emulator logged one request per attempt and still answers.
      expect(svc.emulator.requestLog.read().filter((e) => e.endpoint === "getNas")).toHaveLength(3);
      svc.emulator.faults.clear();
      expect((await client().getNas(nasId)).id).toBe(nasId);
    });
  });

  describe("a call whose reconcile is abandoned", () => {
    it("stops at once: the hanging attempt is aborted and no retry follows", async () => {
      svc.emulator.faults.set([{ kind: "latency", endpoint: "getNas", latencyMs: 30_000 }]);
      const abandon = new AbortController();
      const started = performance.now();
      const call = client({ timeoutMs: 60_000 })
        .withCall({ routine: false, signal: abandon.signal })
        .getNas(nasId);
      setTimeout(() => abandon.abort(), 100);
      const err = await serviceFailure(call);
      expect(err.message).toContain("its reconcile was abandoned");
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(svc.emulator.requestLog.read().filter((e) => e.endpoint === "getNas")).toHaveLength(0);
      // An already abandoned call sends nothing.
      const late = await serviceFailure(
        client().withCall({ routine: false, signal: abandon.signal }).getNas(nasId),
      );
      expect(late.message).toContain("its reconcile was abandoned");
    });
  });

  describe("a call of a process whose Lease may have passed to another (mayCall false)", () => {
    it("is not sent, also when the Lease passes while the call waits before its send (the key read here), and not retried", async () => {
      const refused = await serviceFailure(client({ mayCall: () => false }).getNas(nasId));
      expect(refused.message).toContain("its reconcile was abandoned");
      let leading = true;
      const waited = client({
        mayCall: () => leading,
        apiKey: () => {
          leading = false;
          return HARNESS_API_KEY;
        },
      });
      const late = await serviceFailure(waited.getNas(nasId));
      expect(late.message).toContain("its reconcile was abandoned");
      expect(svc.emulator.requestLog.read().filter((e) => e.endpoint === "getNas")).toHaveLength(0);
      // Leading again (a new process would be), the same client sends.
      leading = true;
      expect((await client({ mayCall: () => leading }).getNas(nasId)).id).toBe(nasId);
    });
  });
});

describe("a call over node:http whose Lease passes while its connection is made", () => {
  it("is not sent (the process paused between the transport's checks and the connect): a create so stopped is abandoned with its outcome known, as never sent", async () => {
    let asks = 0;
    // The transport asks twice before the send; the exchange asks once connected.
    const mayCall = () => {
      asks += 1;
      return asks <= 2;
    };
    const before = svc.emulator.requestLog.read().length;
    const fenced = client({ httpClient: "node-http", mayCall });
    const err = await serviceFailure(fenced.createTemplate({ name: "fenced" }));
    expect(err.message).toContain("its reconcile was abandoned");
    expect(err).toMatchObject({ outcomeUnknown: false });
    expect(svc.emulator.requestLog.read().length).toBe(before);
  });
});
