import type { Logger } from "pino";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { notSynced, reportCache, syncSummary, type UnsyncedKind } from "./cache-sync.js";
import { KubeApiError, WatchStatusError } from "./kube-errors.js";
import { unreachableOr } from "./kube-unreachable.js";

/** A log that keeps its lines as `level: msg`, and their fields. */
function lines() {
  const kept: string[] = [];
  const fields: Record<string, unknown>[] = [];
  const at = (level: string) => (f: Record<string, unknown>, msg: string) => {
    kept.push(`${level}: ${msg}`);
    fields.push(f);
  };
  return { kept, fields, log: { warn: at("warn"), info: at("info") } as unknown as Logger };
}

/** A cache whose kinds `unsynced()` answers have not listed (the others have none). */
function unsyncedCache(unsynced: () => UnsyncedKind[]) {
  return { kinds: () => unsynced().map((k) => ({ ...k, synced: false })) };
}

const refused = new Error("connect ECONNREFUSED 10.96.0.1:443");

describe("reportCache", () => {
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
    reportCache(
      unsyncedCache(() => unsynced),
      { log, timeoutMs: 120_000, onTimeout },
    );
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

  it("gives up at the timeout after the same steps when its timers fire early (a loaded event loop)", async () => {
    const { kept, log } = lines();
    const onTimeout = vi.fn();
    // Timers count from the loop's cached time: by Date.now() they may fire 20 ms early.
    const fake = globalThis.setTimeout;
    const early = (fn: () => void, ms?: number) => fake(fn, Math.max(0, (ms ?? 0) - 20));
    vi.spyOn(globalThis, "setTimeout").mockImplementation(early as typeof setTimeout);
    const unsynced: UnsyncedKind[] = [{ kind: "nasvolumes.aidc.io", error: refused }];
    reportCache(
      unsyncedCache(() => unsynced),
      { log, timeoutMs: 8_000, onTimeout },
    );
    await vi.advanceTimersByTimeAsync(8_000);
    vi.mocked(globalThis.setTimeout).mockRestore();
    // Steps at 1, 3 and 7 s, then the timeout at 8 s (not a 4th step just before it).
    expect(kept).toHaveLength(3);
    expect(onTimeout).toHaveBeenCalledOnce();
  });

  it("says nothing when the cache syncs before the first step, and that it synced after a warning", async () => {
    const quiet = lines();
    reportCache(
      unsyncedCache(() => []),
      { ...quiet, timeoutMs: 1_000, onTimeout: vi.fn() },
    );
    await vi.advanceTimersByTimeAsync(5_000);
    expect(quiet.kept).toEqual([]);

    const { kept, log } = lines();
    let unsynced: UnsyncedKind[] = [{ kind: "namespaces", error: refused }];
    const onTimeout = vi.fn();
    reportCache(
      unsyncedCache(() => unsynced),
      { log, timeoutMs: 0, onTimeout },
    );
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
    reportCache(
      unsyncedCache(() => [{ kind: "namespaces" }]),
      { log, timeoutMs: 0, onTimeout: vi.fn() },
    );
    await vi.advanceTimersByTimeAsync(3_000);
    expect(kept).toEqual(Array(2).fill("info: the cache is still listing"));
  });

  it("waits for ever with a timeout of 0, every 30 s at most", async () => {
    const { kept, log } = lines();
    const onTimeout = vi.fn();
    const unsynced = () => [{ kind: "namespaces", error: refused }];
    reportCache(unsyncedCache(unsynced), { log, timeoutMs: 0, onTimeout });
    await vi.advanceTimersByTimeAsync(31_000 + 10 * 30_000);
    expect(kept).toHaveLength(5 + 10);
    expect(onTimeout).not.toHaveBeenCalled();
  });

  it("ends when told", async () => {
    const { kept, log } = lines();
    const report = reportCache(
      unsyncedCache(() => [{ kind: "namespaces" }]),
      { log, timeoutMs: 5_000, onTimeout: vi.fn() },
    );
    report.end();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(kept).toEqual([]);
  });
});

describe("reportCache once the cache has synced", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A synced cache whose kinds in `failing` have `error`, and its report. */
  async function synced(error: unknown) {
    const out = lines();
    const state = { failing: [] as string[], error };
    const kinds = ["namespaces", "nasvolumes.aidc.io", "buckets.aidc.io"];
    const cache = {
      kinds: () =>
        kinds.map((kind) => ({
          kind,
          synced: true,
          error: state.failing.includes(kind) ? state.error : undefined,
        })),
    };
    const report = reportCache(cache, { log: out.log, timeoutMs: 0, onTimeout: vi.fn() });
    await vi.advanceTimersByTimeAsync(1_000);
    /** Every informer's watch fails now, each telling the report. */
    const down = () => {
      state.failing = [...kinds];
      for (const _ of kinds) report.watchesChanged();
    };
    /** Every informer's watch is answered again, each telling the report. */
    const up = () => {
      state.failing = [];
      for (const _ of kinds) report.watchesChanged();
    };
    return { ...out, state, report, down, up };
  }

  it("warns once per backoff step for all kinds whose watches fail, naming them and why, and says how long it lasted as soon as they are back", async () => {
    const { kept, fields, report, down, up } = await synced(refused);
    expect(kept).toEqual([]);
    down();
    // The informers fail again at each of their backoff steps: still one outage.
    const again = setInterval(() => report.watchesChanged(), 500);
    await vi.advanceTimersByTimeAsync(20_000);
    clearInterval(again);
    up();
    await vi.advanceTimersByTimeAsync(60_000);
    // Steps at 1, 3, 7 and 15 s: four warnings; the watches are back at 20 s.
    expect(kept).toEqual([
      ...Array(4).fill("warn: the cache's watches failed; retrying"),
      "info: the cache's watches are back",
    ]);
    expect(fields[0]).toEqual({
      downMs: 1_000,
      notWatching:
        "not watching: namespaces, nasvolumes.aidc.io, buckets.aidc.io (connect ECONNREFUSED 10.96.0.1:443)",
    });
    expect(fields[4]).toEqual({ downMs: 20_000 });
    expect(vi.getTimerCount()).toBe(0);

    // The next outage is reported anew.
    down();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(kept.at(-1)).toBe("warn: the cache's watches failed; retrying");
    report.end();
  });

  it("says nothing of a failure mended before the first step", async () => {
    const { kept, down, up } = await synced(refused);
    down();
    await vi.advanceTimersByTimeAsync(500);
    up();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(kept).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("ends the outage at a step that finds every watch back, even untold", async () => {
    const { kept, fields, state, down } = await synced(refused);
    down();
    await vi.advanceTimersByTimeAsync(1_000);
    state.failing = [];
    await vi.advanceTimersByTimeAsync(60_000);
    expect(kept).toEqual([
      "warn: the cache's watches failed; retrying",
      "info: the cache's watches are back",
    ]);
    expect(fields[1]).toEqual({ downMs: 3_000 });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("tells of watches the API server paces (429) as news for 15 s, then warns", async () => {
    const paced = new WatchStatusError(429, "storage is (re)initializing");
    const { kept, down, report } = await synced(paced);
    down();
    await vi.advanceTimersByTimeAsync(31_000);
    // Steps at 1, 3, 7, 15 and 31 s.
    expect(kept).toEqual([
      ...Array(3).fill("info: the API server is pacing the cache's watches"),
      ...Array(2).fill("warn: the cache's watches failed; retrying"),
    ]);
    report.end();
  });

  it("leaves failures before the first sync to the start's report", async () => {
    const { kept, log } = lines();
    let unsynced: UnsyncedKind[] = [{ kind: "namespaces", error: refused }];
    const report = reportCache(
      unsyncedCache(() => unsynced),
      {
        log,
        timeoutMs: 0,
        onTimeout: vi.fn(),
      },
    );
    report.watchesChanged();
    await vi.advanceTimersByTimeAsync(1_000);
    unsynced = [];
    await vi.advanceTimersByTimeAsync(60_000);
    expect(kept).toEqual([
      "warn: the cache has not synced; retrying",
      "info: the cache has synced",
    ]);
  });
});

describe("notSynced", () => {
  it("names the kinds not listed, for /readyz, and nothing once all have", () => {
    const kinds = [
      { kind: "namespaces", synced: true, error: refused },
      { kind: "buckets.aidc.io", synced: false, error: refused },
    ];
    expect(notSynced({ kinds: () => kinds })).toBe(
      "not synced: buckets.aidc.io (connect ECONNREFUSED 10.96.0.1:443)",
    );
    expect(notSynced({ kinds: () => [kinds[0] as (typeof kinds)[0]] })).toBeUndefined();
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

  it("says of kinds a front answered for itself (no Audit-Id, no Status) what it said, in one group, lists and watches alike", () => {
    const page = (code: number, title: string) =>
      `<html>\r\n<head><title>${code} ${title}</title></head>\r\n<body><h1>${code} ${title}</h1></body></html>`;
    const byFront = (plural: string) =>
      new KubeApiError(
        "GET",
        `/apis/aidc.io/v1alpha1/${plural}`,
        404,
        page(404, "Not Found"),
        false,
      );
    expect(
      syncSummary([
        { kind: "nasvolumes.aidc.io", error: byFront("nasvolumes") },
        { kind: "buckets.aidc.io", error: byFront("buckets") },
        { kind: "namespaces", error: new WatchStatusError(502, page(502, "Bad Gateway"), false) },
        // A list's 502, as KubeClient.request throws it: a KubeUnreachableError.
        {
          kind: "leases",
          error: unreachableOr(new KubeApiError("GET", "/leases", 502, undefined, false)),
        },
      ]),
    ).toBe(
      'not synced: nasvolumes.aidc.io, buckets.aidc.io (404 Not Found from a proxy in front of the API server, not from the API server: "404 Not Found" (is the path of the kubeconfig\'s server URL right?)); namespaces (502 Bad Gateway from a proxy in front of the API server, not from the API server: "502 Bad Gateway"); leases (502 Bad Gateway from a proxy in front of the API server, not from the API server)',
    );
  });
});
