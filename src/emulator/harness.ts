/**
 * An emulator with a client and an admin client wired to it, for tests and benchmarks
 * that need "the service" in-process: `const svc = await startEmulatedService()`, use
 * `svc.client`, then `await svc.stop()`. Time can be controlled with `svc.clock`.
 */
import { ServiceClient, type ServiceClientOptions } from "../service/client.js";
import { EmulatorAdmin } from "./admin-client.js";
import { type EmulatorOptions, type RunningEmulator, startEmulator } from "./server.js";

/** A manual clock: `now()` returns `ms` until `advance()` moves it. */
export interface ManualClock {
  now(): number;
  advance(ms: number): void;
}

/** A clock starting at `start` (default 2025-01-01T00:00:00Z) that moves only when told. */
export function manualClock(start = Date.UTC(2025, 0, 1)): ManualClock {
  let ms = start;
  return {
    now: () => ms,
    advance: (by) => {
      ms += by;
    },
  };
}

/** A running emulator with its clients. */
export interface EmulatedService {
  emulator: RunningEmulator;
  client: ServiceClient;
  admin: EmulatorAdmin;
  apiKey: string;
  /** Present when the service was started with `manualTime: true`. */
  clock?: ManualClock;
  /** A further client on the same emulator (own options, same base URL and key unless given). */
  newClient(options?: Partial<ServiceClientOptions>): ServiceClient;
  /** Stops the emulator and closes every client made here. */
  stop(): Promise<void>;
}

/** Options of `startEmulatedService`. */
export interface EmulatedServiceOptions {
  emulator?: Partial<EmulatorOptions>;
  client?: Partial<ServiceClientOptions>;
  /** Drive the emulator's time with a manual clock instead of Date.now. */
  manualTime?: boolean;
}

/** The API key the harness uses unless told otherwise (long enough to be scrubbed). */
export const HARNESS_API_KEY = "test-api-key-0123456789abcdef";

/**
 * Starts an emulator on a free loopback port and a `ServiceClient` for it, with no
 * client-side rate limit and no retry backoff so tests run fast.
 */
export async function startEmulatedService(
  options: EmulatedServiceOptions = {},
): Promise<EmulatedService> {
  const apiKey = options.emulator?.apiKey ?? HARNESS_API_KEY;
  const clock = options.manualTime ? manualClock() : undefined;
  const emulator = await startEmulator({
    subscriptionDelayMs: 0,
    ...options.emulator,
    apiKey,
    ...(clock ? { now: clock.now } : {}),
  });
  const clients: ServiceClient[] = [];
  const newClient = (extra: Partial<ServiceClientOptions> = {}) => {
    const client = new ServiceClient({
      baseUrl: emulator.url,
      apiKey: () => apiKey,
      rateLimit: null,
      retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 },
      timeoutMs: 5000,
      ...options.client,
      ...extra,
    });
    clients.push(client);
    return client;
  };
  const client = newClient();
  return {
    emulator,
    client,
    admin: new EmulatorAdmin(emulator.url),
    apiKey,
    ...(clock ? { clock } : {}),
    newClient,
    stop: async () => {
      for (const c of clients) c.close();
      await emulator.stop();
    },
  };
}
