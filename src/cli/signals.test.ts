import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { RELAYED_REPEAT_MS, waitForSignal } from "./signals.js";

describe("waitForSignal", () => {
  let before: { int: unknown[]; term: unknown[] };
  beforeEach(() => {
    vi.useFakeTimers();
    before = { int: process.listeners("SIGINT"), term: process.listeners("SIGTERM") };
  });
  afterEach(() => {
    for (const l of process.listeners("SIGINT"))
      if (!before.int.includes(l)) process.off("SIGINT", l);
    for (const l of process.listeners("SIGTERM")) {
      if (!before.term.includes(l)) process.off("SIGTERM", l);
    }
    vi.restoreAllMocks();
    vi.useRealTimers();
  });

  it("resolves on the first signal and lets a relayed repeat of it not end the stop", async () => {
    const exit = vi.spyOn(process, "exit").mockImplementation(() => undefined as never);
    const signal = waitForSignal();
    process.emit("SIGINT", "SIGINT");
    expect(await signal).toBe("SIGINT");
    // npm relays a Ctrl-C to its child (tsx's CLI one the process was slow to
    // acknowledge): still a listener, so neither Node's default action nor tsx's hidden
    // handler ends the process.
    vi.advanceTimersByTime(30);
    process.emit("SIGINT", "SIGINT");
    expect(exit).not.toHaveBeenCalled();
    expect(process.listenerCount("SIGINT")).toBeGreaterThan(before.int.length);
    // A second Ctrl-C of the user's own, later: exit at once.
    vi.advanceTimersByTime(RELAYED_REPEAT_MS);
    process.emit("SIGINT", "SIGINT");
    expect(exit).toHaveBeenCalledWith(130);
  });
});
