import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { RELAYED_REPEAT_MS, startInterruptibly, waitForSignal } from "./signals.js";

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

  it("a start-up interrupted stops what it started, says so, and resolves with nothing", async () => {
    const out: string[] = [];
    const up = startInterruptibly(
      (signal) =>
        new Promise<string>((_, reject) => {
          // What a start-up does: stop what it started, then reject.
          signal.addEventListener("abort", () => {
            out.push("stopped what started");
            reject(signal.reason);
          });
        }),
      async () => {
        out.push("stop called");
      },
      (line) => out.push(line),
    );
    process.emit("SIGTERM", "SIGTERM");
    expect(await up).toBeUndefined();
    expect(out).toEqual([
      "stopping what has started (Ctrl-C again to force)...",
      "stopped what started",
      "stopped during start-up",
    ]);
  });

  it("a start-up that finished although interrupted is stopped; one not interrupted is returned", async () => {
    const out: string[] = [];
    const stopped: string[] = [];
    const late = startInterruptibly(
      async () => {
        process.emit("SIGINT", "SIGINT");
        return "plane";
      },
      async (s) => {
        stopped.push(s);
      },
      (line) => out.push(line),
    );
    expect(await late).toBeUndefined();
    expect(stopped).toEqual(["plane"]);
    expect(out.at(-1)).toBe("stopped during start-up");

    const up = await startInterruptibly(
      async () => "plane",
      async () => undefined,
      () => undefined,
    );
    expect(up?.started).toBe("plane");
    const failed = startInterruptibly(
      async () => {
        throw new Error("etcd exited with code 1");
      },
      async () => undefined,
      () => undefined,
    );
    await expect(failed).rejects.toThrow("etcd exited with code 1");
  });
});
