/**
 * What the tests against the service emulator share: one emulator a file (each file
 * keeps its own options and client: the contract tests of src/service/kinds on a manual
 * clock, the transport's on the real one), and the error a call fails with.
 */
import { afterAll, beforeAll, beforeEach } from "vitest";
import {
  type EmulatedService,
  type EmulatedServiceOptions,
  startEmulatedService,
} from "../../src/emulator/harness.js";
import { ServiceError } from "../../src/service/errors.js";

/**
 * Starts one emulator with `options` before the file's tests (`started` gets it, to keep
 * it and make the file's client), stops it after them, and before each test brings its
 * state back to the fixtures, clears its faults and request log, and gives it back the
 * harness's API key.
 */
export function emulatorPerFile(
  options: EmulatedServiceOptions,
  started: (svc: EmulatedService) => void,
): void {
  let svc: EmulatedService | undefined;
  beforeAll(async () => {
    svc = await startEmulatedService(options);
    started(svc);
  });
  afterAll(() => svc?.stop());
  beforeEach(() => {
    if (!svc) return;
    svc.emulator.state.reset();
    svc.emulator.faults.clear();
    svc.emulator.requestLog.clear();
    svc.emulator.setApiKey(svc.apiKey);
  });
}

/** The error `p` is rejected with; fails the test when `p` resolves. */
export async function failure(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("expected the call to fail");
}

/** {@link failure} for a call of the service client: the error is a `ServiceError`. */
export async function serviceFailure(p: Promise<unknown>): Promise<ServiceError> {
  const err = await failure(p);
  if (err instanceof ServiceError) return err;
  throw err;
}
