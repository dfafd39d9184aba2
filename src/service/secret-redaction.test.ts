/**
 * The API key never appears in a log line or an error: every outcome of a call (success,
 * 403, 500, refusal, timeout, dropped connection, malformed answer, invalid request,
 * connection refused, retries, a message echoing the key) is driven with the client logging at trace level, and
 * every line and every error (message, stack, cause, util.inspect) is searched.
 */
import { inspect } from "node:util";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../controlplane/controlplane.js";
import { type EmulatedService, startEmulatedService } from "../emulator/harness.js";
import { ServiceClient } from "./client.js";
import { REDACTED_LOG_PATHS } from "./transport-options.js";

const KEY = "sk-live-7f3a9c2e5b1d4f6a8c0e2b4d6f8a0c2e";

let svc: EmulatedService;
const lines: string[] = [];
const errors: unknown[] = [];
const logger = pino({ level: "trace" }, { write: (line: string) => lines.push(line) });

async function attempt(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    errors.push(err);
  }
}

beforeAll(async () => {
  svc = await startEmulatedService({ emulator: { apiKey: KEY } });
  const client = svc.newClient({
    logger,
    timeoutMs: 100,
    retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 },
  });
  const nasId = (await svc.admin.seed({ nas: [{ name: "n" }] })).nas[0] as string;
  await attempt(client.getNas(nasId));
  await attempt(client.getNas("nas-404"));
  await attempt(
    client.subscribeNas({ productCode: "nas.fixed.200", storageParams: { storageCapacity: 999 } }),
  );
  await attempt(
    client.createTrainingTask({
      name: "",
      createType: "DIRECT",
      productCode: "p",
      workerCount: 1,
      image: "i",
    }),
  );
  svc.emulator.faults.set([
    { kind: "error", endpoint: "listNas" },
    { kind: "drop", endpoint: "listCci" },
    { kind: "malformed", endpoint: "getCci" },
    { kind: "latency", endpoint: "listTrainingProducts", latencyMs: 300 },
    { kind: "rateLimit", endpoint: "listNasProducts" },
  ]);
  await attempt(client.listNas());
  await attempt(client.listCci());
  await attempt(client.getCci("cci-0001"));
  await attempt(client.listTrainingProducts());
  await attempt(client.listNasProducts());
  svc.emulator.faults.set([
    { kind: "error", endpoint: "getNas", status: 400, message: "bad key", echoKey: true },
  ]);
  await attempt(client.getNas(nasId));
  svc.emulator.faults.clear();
  svc.emulator.setApiKey("another-key-0123456789");
  await attempt(client.getNas(nasId));
  const unreachable = new ServiceClient({
    baseUrl: `http://127.0.0.1:${await freePort()}`,
    apiKey: () => KEY,
    logger,
    rateLimit: null,
    retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 },
  });
  await attempt(unreachable.listNas());
  unreachable.close();
  // A caller that logs an object holding the key in a conventional field gets it blanked.
  logger
    .child({ component: "service-client" }, { redact: REDACTED_LOG_PATHS })
    .info({ headers: { authorization: `Bearer ${KEY}` }, apiKey: KEY }, "careless caller");
});
afterAll(() => svc.stop());

describe("the API key", () => {
  it("was exercised: many log lines and an error for every failing outcome", () => {
    expect(lines.filter((l) => l.includes('"service call"')).length).toBeGreaterThan(10);
    expect(lines.some((l) => l.includes("retrying service call"))).toBe(true);
    expect(errors).toHaveLength(11);
  });

  it("appears in no log line", () => {
    for (const line of lines) expect(line).not.toContain(KEY);
  });

  it("appears in no error message, stack, cause or inspection", () => {
    for (const err of errors) {
      const e = err as Error;
      expect(e.message).not.toContain(KEY);
      expect(e.stack ?? "").not.toContain(KEY);
      expect(String(e.cause ?? "")).not.toContain(KEY);
      expect(inspect(err, { depth: 6 })).not.toContain(KEY);
      expect(JSON.stringify(err)).not.toContain(KEY);
    }
  });

  it("appears in nothing the emulator records", () => {
    expect(JSON.stringify(svc.emulator.requestLog.read())).not.toContain(KEY);
  });

  it("is blanked by the logger's redaction when a caller logs it in a header or apiKey field", () => {
    const careless = lines.find((l) => l.includes("careless caller"));
    expect(careless).toContain("[Redacted]");
  });
});
