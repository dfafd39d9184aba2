import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { withDeadline } from "./resource.js";

describe("withDeadline", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("settles with the promise's value when it comes first, and never calls onTimeout", async () => {
    const onTimeout = vi.fn(() => "late");
    const result = withDeadline(
      new Promise<string>((r) => setTimeout(() => r("value"), 50)),
      100,
      onTimeout,
    );
    await vi.advanceTimersByTimeAsync(50);
    await expect(result).resolves.toBe("value");
    await vi.advanceTimersByTimeAsync(1_000);
    expect(onTimeout).not.toHaveBeenCalled();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("rejects with the promise's error when it comes first", async () => {
    const result = withDeadline(Promise.reject(new Error("boom")), 100, () => "late");
    await expect(result).rejects.toThrow("boom");
    expect(vi.getTimerCount()).toBe(0);
  });

  it("settles with what onTimeout returns at the deadline, and ignores the promise's late end", async () => {
    const onTimeout = vi.fn(() => false);
    let fail!: (err: Error) => void;
    const never = new Promise<boolean>((_, reject) => {
      fail = reject;
    });
    const result = withDeadline(never, 100, onTimeout);
    await vi.advanceTimersByTimeAsync(99);
    expect(onTimeout).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    await expect(result).resolves.toBe(false);
    expect(onTimeout).toHaveBeenCalledOnce();
    // A rejection after the deadline is handled: no unhandled rejection fails the run.
    fail(new Error("too late"));
    await vi.advanceTimersByTimeAsync(0);
  });

  it("rejects with what onTimeout throws at the deadline", async () => {
    const result = withDeadline(new Promise(() => {}), 100, () => {
      throw new Error("no answer within 100 ms");
    });
    const outcome = expect(result).rejects.toThrow("no answer within 100 ms");
    await vi.advanceTimersByTimeAsync(100);
    await outcome;
  });

  it("takes the outcome of a promise onTimeout returns", async () => {
    const result = withDeadline(new Promise(() => {}), 10, () => Promise.resolve("fallback"));
    await vi.advanceTimersByTimeAsync(10);
    await expect(result).resolves.toBe("fallback");
  });

  it("treats a deadline already passed (0 or less) as reached at once, unless the promise has settled", async () => {
    const late = withDeadline(new Promise(() => {}), -5, () => "passed");
    await vi.advanceTimersByTimeAsync(0);
    await expect(late).resolves.toBe("passed");
    await expect(withDeadline(Promise.resolve("done"), 0, () => "passed")).resolves.toBe("done");
  });
});
