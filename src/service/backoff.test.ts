import { describe, expect, it } from "vitest";
import { backoffDelayMs } from "./backoff.js";

const policy = { maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 1000 };

describe("backoffDelayMs", () => {
  it("doubles the ceiling per attempt (full jitter at the top of the range)", () => {
    const top = () => 0.999999;
    expect([1, 2, 3, 4].map((a) => backoffDelayMs(policy, a, top))).toEqual([99, 199, 399, 799]);
  });

  it("never exceeds the maximum delay", () => {
    expect(backoffDelayMs(policy, 10, () => 0.999999)).toBeLessThanOrEqual(1000);
  });

  it("spreads retries down to zero (jitter)", () => {
    expect(backoffDelayMs(policy, 3, () => 0)).toBe(0);
  });

  it("waits at least a server's Retry-After, capped by the maximum", () => {
    expect(backoffDelayMs(policy, 1, () => 0, 700)).toBe(700);
    expect(backoffDelayMs(policy, 1, () => 0, 60_000)).toBe(1000);
  });
});
