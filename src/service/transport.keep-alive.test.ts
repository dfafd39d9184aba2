/**
 * Idle keep-alive sockets are closed before the server closes them: a request is never
 * written on a connection the server is closing (ECONNRESET, a create's outcome
 * unknown). The emulator's keep-alive timeout is short (300 ms) and announces no hint.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatedService, startEmulatedService } from "../emulator/harness.js";
import { ServiceError } from "./errors.js";
import { UNSAFE_REQUEST_IDLE_MS } from "./http-exchange.js";

const SERVER_KEEP_ALIVE_MS = 300;
let svc: EmulatedService;

beforeAll(async () => {
  svc = await startEmulatedService({ emulator: { keepAliveTimeoutMs: SERVER_KEEP_ALIVE_MS } });
});
afterAll(() => svc.stop());

/** Holds the event loop, as a busy or paused process does: no timer runs meanwhile. */
function blockEventLoop(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

const subscribe = (c: ReturnType<EmulatedService["newClient"]>) =>
  c.subscribeNas({ productCode: "nas.fixed.200" });

describe("keep-alive sockets", () => {
  it("without a client idle bound, a create written on a socket the server closed fails with its outcome unknown", async () => {
    const client = svc.newClient({
      idleSocketTimeoutMs: 60_000,
      retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
    });
    await client.listNasProducts();
    blockEventLoop(SERVER_KEEP_ALIVE_MS + 200);
    const err = await subscribe(client).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ServiceError);
    expect((err as ServiceError).outcomeUnknown).toBe(true);
    expect((err as ServiceError).message).toMatch(/ECONNRESET|socket hang up/);
  });

  it("a socket idle past idleSocketTimeoutMs is not reused, even when its timer is late", async () => {
    const client = svc.newClient({
      idleSocketTimeoutMs: 200,
      retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
    });
    await client.listNasProducts();
    blockEventLoop(SERVER_KEEP_ALIVE_MS + 200);
    await expect(subscribe(client)).resolves.toEqual(expect.any(String));
  });

  it("creates spaced below and past the server's keep-alive timeout all succeed, sent once each", async () => {
    const client = svc.newClient({
      idleSocketTimeoutMs: 200,
      retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
    });
    svc.emulator.requestLog.clear();
    for (let gap = 100; gap <= 2 * SERVER_KEEP_ALIVE_MS; gap += 50) {
      await subscribe(client);
      await new Promise((r) => setTimeout(r, gap));
    }
    expect(svc.emulator.requestLog.read().length).toBe(11);
  });

  it("a create takes no socket idle past UNSAFE_REQUEST_IDLE_MS, though the idle bound is longer: a front closing idle sockets sooner (nginx keepalive_timeout) never gets it on one it closed", async () => {
    const front = await startEmulatedService({
      emulator: { keepAliveTimeoutMs: UNSAFE_REQUEST_IDLE_MS + 200 },
    });
    try {
      const client = front.newClient({
        idleSocketTimeoutMs: 60_000,
        retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
      });
      await client.listNasProducts();
      // The server closes the socket meanwhile; the client has not seen it yet.
      blockEventLoop(UNSAFE_REQUEST_IDLE_MS + 500);
      await expect(subscribe(client)).resolves.toEqual(expect.any(String));
      expect(front.emulator.requestLog.read().map((e) => e.endpoint)).toEqual([
        "listNasProducts",
        "subscribeNas",
      ]);
    } finally {
      await front.stop();
    }
  });

  it("bounds only idle sockets: an answer slower than the bound arrives", async () => {
    const client = svc.newClient({
      idleSocketTimeoutMs: 100,
      retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
    });
    svc.emulator.faults.set([{ kind: "latency", endpoint: "subscribeNas", latencyMs: 400 }]);
    try {
      await expect(subscribe(client)).resolves.toEqual(expect.any(String));
    } finally {
      svc.emulator.faults.clear();
    }
  });
});
