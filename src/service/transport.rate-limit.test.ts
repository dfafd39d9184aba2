/**
 * The client-side rate limit of the transport, against the emulator: the token bucket,
 * the waits it reports and records in the metrics, priorities, and a wait too long to make.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { emulatorPerFile } from "../../test/support/service-contract.js";
import type { EmulatedService } from "../emulator/harness.js";
import { RuntimeMetrics } from "../runtime/metrics.js";
import type { RequestObservation } from "./transport-options.js";

let svc: EmulatedService;
let nasId: string;

emulatorPerFile({}, (started) => {
  svc = started;
});
beforeEach(async () => {
  nasId = (await svc.admin.seed({ nas: [{ name: "n" }] })).nas[0] as string;
});

describe("the client-side rate limit", () => {
  it("spaces requests beyond the burst at the configured rate", async () => {
    const client = svc.newClient({ rateLimit: { ratePerSecond: 20, burst: 1 }, catalogTtlMs: 0 });
    const started = performance.now();
    await Promise.all(Array.from({ length: 6 }, () => client.listNasProducts()));
    expect(performance.now() - started).toBeGreaterThanOrEqual(240);
  });

  it("reports how long each call waited for it", async () => {
    const attempts: RequestObservation[] = [];
    const client = svc.newClient({
      rateLimit: { ratePerSecond: 20, burst: 1 },
      catalogTtlMs: 0,
      onRequest: (e) => attempts.push(e),
    });
    await Promise.all(Array.from({ length: 4 }, () => client.listNasProducts()));
    const waits = attempts.map((a) => a.rateLimitWaitMs).sort((a, b) => a - b);
    expect(waits[0]).toBeLessThan(5);
    // The fourth call waits for three tokens at 20/s.
    expect(waits[3]).toBeGreaterThanOrEqual(140);
  });

  it("bounces a call, unsent, that would wait longer than rateLimitMaxWaitMs", async () => {
    const attempts: RequestObservation[] = [];
    const messages: string[] = [];
    const client = svc.newClient({
      rateLimit: { ratePerSecond: 2, burst: 1 },
      rateLimitMaxWaitMs: 600,
      catalogTtlMs: 0,
      onRequest: (e) => attempts.push(e),
    });
    const calls = Array.from({ length: 4 }, () =>
      client.listNasProducts().then(
        () => "sent",
        (e: unknown) => {
          // Not sent, and it says when the limit has room: within a few refills.
          const { reason, requeueAfterMs, outcomeUnknown } = e as {
            reason?: string;
            requeueAfterMs?: number;
            outcomeUnknown?: boolean;
          };
          expect(requeueAfterMs).toBeGreaterThan(600);
          expect(requeueAfterMs).toBeLessThanOrEqual(1_500);
          expect(outcomeUnknown).toBe(false);
          messages.push((e as Error).message);
          return reason;
        },
      ),
    );
    // The first takes the token, the second waits 500 ms; the others would wait longer.
    expect(await Promise.all(calls)).toEqual([
      "sent",
      "sent",
      "ConnectionThrottled",
      "ConnectionThrottled",
    ]);
    expect(attempts).toHaveLength(2);
    // The same words however long each would have waited: a repeat rewrites no condition.
    expect(messages).toEqual(
      Array(2).fill(
        "the client-side rate limit of this connection is saturated (more than 600 ms of calls ahead): listNasProducts was not sent and is retried",
      ),
    );
  });

  it("refuses to start an order (requireOperations) while the rate limit is saturated", async () => {
    const client = svc.newClient({
      rateLimit: { ratePerSecond: 1, burst: 1 },
      rateLimitMaxWaitMs: 500,
      catalogTtlMs: 0,
    });
    await client.listNasProducts();
    // The token is spent: the next call would wait about a second.
    await expect(client.requireOperations(["getNas"], "a NAS order")).rejects.toMatchObject({
      reason: "ConnectionThrottled",
    });
  });

  it("lets a normal call that waits go before low-priority ones (routine polls), and records each call in its connection's metrics", async () => {
    const attempts: RequestObservation[] = [];
    const metrics = new RuntimeMetrics({ processMetrics: false });
    const client = svc.newClient({
      rateLimit: { ratePerSecond: 20, burst: 1 },
      catalogTtlMs: 0,
      onRequest: (e) => attempts.push(e),
      metrics: metrics.serviceCallMetrics("acme"),
    });
    const routine = client.withCall({ routine: true });
    const polls = Array.from({ length: 3 }, () => routine.listNasProducts());
    const work = client.getNas(nasId);
    await Promise.all([...polls, work]);
    const waitOf = (endpoint: string) =>
      attempts.filter((a) => a.endpoint === endpoint).map((a) => a.rateLimitWaitMs);
    expect(attempts.map((a) => `${a.endpoint} ${a.priority}`).sort()).toEqual([
      "getNas normal",
      "listNasProducts low",
      "listNasProducts low",
      "listNasProducts low",
    ]);
    const [normal] = waitOf("getNas");
    const lows = waitOf("listNasProducts").sort((a, b) => a - b);
    // The first poll took the burst token; the normal call got the next one (~50 ms),
    // the other two polls the ones after it (~100 and ~150 ms).
    expect(normal).toBeGreaterThanOrEqual(30);
    expect(normal).toBeLessThan(lows[1] as number);
    expect(lows[2]).toBeGreaterThanOrEqual(130);
    const text = await metrics.text();
    for (const line of [
      'aidc_service_requests_total{endpoint="getNas",code="200",connection="acme"} 1',
      'aidc_service_requests_total{endpoint="listNasProducts",code="200",connection="acme"} 3',
      'aidc_service_request_duration_seconds_count{endpoint="listNasProducts",connection="acme"} 3',
      'aidc_service_rate_limit_wait_seconds_count{priority="normal",connection="acme"} 1',
      'aidc_service_rate_limit_wait_seconds_count{priority="low",connection="acme"} 3',
    ]) {
      expect(text).toContain(line);
    }
  });
});
