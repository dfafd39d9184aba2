/**
 * What the tests against the service emulator share: one emulator a file on a manual
 * clock (the contract tests of src/service/kinds; each keeps its own emulator options
 * and client), and the error a call fails with.
 */
import { afterAll, beforeAll, beforeEach } from "vitest";
import { type EmulatedService, startEmulatedService } from "../../src/emulator/harness.js";
import type { EmulatorOptions } from "../../src/emulator/server.js";

/**
 * Starts one emulator with a manual clock before the file's tests (`started` gets it, to
 * keep it and make the file's client), stops it after them, and brings its state back to
 * the fixtures and clears its request log before each test.
 */
export function emulatorPerFile(
  emulator: Partial<EmulatorOptions>,
  started: (svc: EmulatedService) => void,
): void {
  let svc: EmulatedService | undefined;
  beforeAll(async () => {
    svc = await startEmulatedService({ manualTime: true, emulator });
    started(svc);
  });
  afterAll(() => svc?.stop());
  beforeEach(() => {
    svc?.emulator.state.reset();
    svc?.emulator.requestLog.clear();
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
