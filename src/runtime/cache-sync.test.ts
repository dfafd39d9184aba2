import type { Logger } from "pino";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { reportCacheSync, syncSummary, type UnsyncedKind } from "./cache-sync.js";
import { KubeApiError } from "./kube-errors.js";

/** A log that keeps its lines as `level: msg`. */
function lines() {
  const kept: string[] = [];
  const at = (level: string) => (_: unknown, msg: string) => kept.push(`${level}: ${msg}`);
  return { kept, log: { warn: at("warn"), info: at("info") } as unknown as Logger };
}

const refused = new Error("connect ECONNREFUSED 10.96.0.1:443");

describe("reportCacheSync", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("warns once per backoff step while the cache has not synced, then gives up at the timeout", async () => {
    const { kept, log } = lines();
    const onTimeout = vi.fn();
    const unsynced: UnsyncedKind[] = [{ kind: "nasvolumes.aidc.io", error: refused }];
    reportCacheSync({ unsynced: () => unsynced }, { log, timeoutMs: 120_000, onTimeout });
    // Steps at 1, 3, 7, 15, 31, 61 and 91 s; the timeout at 120 s.
    await vi.advanceTimersByTimeAsync(91_000);
    expect(kept).toEqual(Array(7).fill("warn: the cache has not synced; retrying"));
    expect(onTimeout).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(29_000);
    expect(onTimeout).toHaveBeenCalledExactlyOnceWith(
      "the cache did not sync within 120000 ms (not synced: nasvolumes.aidc.io (connect ECONNREFUSED 10.96.0.1:443)); exiting so that the pod restarts",
    );
    await vi.advanceTimersByTimeAsync(600_000);
    expect(kept).toHaveLength(7);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("says nothing when the cache syncs before the first step, and that it synced after a warning", async () => {
    const quiet = lines();
    reportCacheSync({ unsynced: () => [] }, { ...quiet, timeoutMs: 1_000, onTimeout: vi.fn() });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(quiet.kept).toEqual([]);

    const { kept, log } = lines();
    let unsynced: UnsyncedKind[] = [{ kind: "namespaces", error: refused }];
    const onTimeout = vi.fn();
    reportCacheSync({ unsynced: () => unsynced }, { log, timeoutMs: 0, onTimeout });
    await vi.advanceTimersByTimeAsync(1_000);
    unsynced = [];
    await vi.advanceTimersByTimeAsync(600_000);
    expect(kept).toEqual([
      "warn: the cache has not synced; retrying",
      "info: the cache has synced",
    ]);
    expect(onTimeout).not.toHaveBeenCalled();
  });

  it("tells of lists merely still under way as news, not a warning", async () => {
    const { kept, log } = lines();
    reportCacheSync(
      { unsynced: () => [{ kind: "namespaces" }] },
      { log, timeoutMs: 0, onTimeout: vi.fn() },
    );
    await vi.advanceTimersByTimeAsync(3_000);
    expect(kept).toEqual(Array(2).fill("info: the cache is still listing"));
  });

  it("waits for ever with a timeout of 0, every 30 s at most", async () => {
    const { kept, log } = lines();
    const onTimeout = vi.fn();
    const unsynced = () => [{ kind: "namespaces", error: refused }];
    reportCacheSync({ unsynced }, { log, timeoutMs: 0, onTimeout });
    await vi.advanceTimersByTimeAsync(31_000 + 10 * 30_000);
    expect(kept).toHaveLength(5 + 10);
    expect(onTimeout).not.toHaveBeenCalled();
  });

  it("ends when told", async () => {
    const { kept, log } = lines();
    const end = reportCacheSync(
      { unsynced: () => [{ kind: "namespaces" }] },
      { log, timeoutMs: 5_000, onTimeout: vi.fn() },
    );
    end();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(kept).toEqual([]);
  });
});

describe("syncSummary", () => {
  it("groups the kinds not listed by the error of their last list", () => {
    expect(
      syncSummary([
        { kind: "a", error: refused },
        { kind: "b" },
        { kind: "c", error: refused },
        { kind: "d", error: "403 Forbidden" },
      ]),
    ).toBe("not synced: a, c (connect ECONNREFUSED 10.96.0.1:443); b; d (403 Forbidden)");
  });

  it("says of kinds whose lists answer 404 that the API server does not serve them, in one group", () => {
    const notServed = (plural: string) =>
      new KubeApiError("GET", `/apis/aidc.io/v1alpha1/${plural}`, 404, "404 page not found");
    expect(
      syncSummary([
        { kind: "nasvolumes.aidc.io", error: notServed("nasvolumes") },
        { kind: "buckets.aidc.io", error: notServed("buckets") },
      ]),
    ).toBe(
      "not synced: nasvolumes.aidc.io, buckets.aidc.io (404: the API server does not serve these kinds; are the CRDs installed?)",
    );
  });
});
