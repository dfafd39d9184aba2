import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ExponentialBackoff, TokenBucket } from "./fair-lanes.js";
import { WorkQueue } from "./workqueue.js";

/** Resolves pending promise callbacks without moving fake time. */
const flush = () => vi.advanceTimersByTimeAsync(0);

/** Asks for the next key without waiting; `key` is set once the queue hands one out. */
function pendingGet(q: WorkQueue): { key?: string | undefined } {
  const got: { key?: string | undefined } = {};
  void q.get().then((k) => {
    got.key = k;
  });
  return got;
}

describe("WorkQueue", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("queues a key added several times only once", async () => {
    const q = new WorkQueue();
    q.add("ns/a");
    q.add("ns/a");
    q.add("ns/b");
    q.add("ns/a");
    expect(q.len()).toBe(2);
    expect(await q.get()).toBe("ns/a");
    expect(await q.get()).toBe("ns/b");
    expect(q.len()).toBe(0);
  });

  it("never hands the same key to two workers at once", async () => {
    const q = new WorkQueue();
    q.add("k");
    const first = await q.get();
    expect(first).toBe("k");
    q.add("k");
    const second = pendingGet(q);
    await flush();
    expect(second.key).toBeUndefined();
    q.done("k");
    await flush();
    expect(second.key).toBe("k");
  });

  it("re-queues a key added while it was processed, once, after done", async () => {
    const q = new WorkQueue();
    q.add("k");
    await q.get();
    q.add("k");
    q.add("k");
    expect(q.len()).toBe(0);
    q.done("k");
    expect(q.len()).toBe(1);
    expect(await q.get()).toBe("k");
    q.done("k");
    expect(q.len()).toBe(0);
  });

  it("hands different keys to different workers in parallel", async () => {
    const q = new WorkQueue();
    const got: string[] = [];
    const worker = async () => {
      const k = await q.get();
      if (k) got.push(k);
    };
    const workers = [worker(), worker()];
    q.add("a");
    q.add("b");
    await Promise.all(workers);
    expect(got.sort()).toEqual(["a", "b"]);
    expect(q.inFlight()).toBe(2);
  });

  it("grows the retry delay of a failing key exponentially from 100 ms up to 5 minutes", () => {
    const q = new WorkQueue({ rateLimit: { qps: 0, burst: 0 } });
    const delays = Array.from({ length: 15 }, () => q.addRateLimited("k"));
    expect(delays.slice(0, 5)).toEqual([100, 200, 400, 800, 1600]);
    expect(delays.at(-1)).toBe(300_000);
    expect(q.numRequeues("k")).toBe(15);
    q.forget("k");
    expect(q.numRequeues("k")).toBe(0);
    expect(q.addRateLimited("k")).toBe(100);
  });

  it("delivers a rate-limited key only after its backoff", async () => {
    const q = new WorkQueue();
    q.addRateLimited("k");
    q.addRateLimited("k");
    // The second failure asks 200 ms, but the first 100 ms delay is earlier and wins.
    expect(q.len()).toBe(0);
    await vi.advanceTimersByTimeAsync(99);
    expect(q.len()).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(q.len()).toBe(1);
  });

  it("spaces retries of many keys by the global rate limit once the burst is spent", () => {
    const q = new WorkQueue({ rateLimit: { qps: 10, burst: 3 }, backoff: { baseMs: 1 } });
    const delays = ["a", "b", "c", "d", "e", "f"].map((k) => q.addRateLimited(k));
    expect(delays.slice(0, 3)).toEqual([1, 1, 1]);
    expect(delays.slice(3)).toEqual([100, 200, 300]);
  });

  it("runs a requeueAfter at its time and keeps the earliest of two delays", async () => {
    const q = new WorkQueue();
    q.addAfter("k", 5_000);
    q.addAfter("k", 10_000);
    q.addAfter("j", 10_000);
    q.addAfter("j", 2_000);
    await vi.advanceTimersByTimeAsync(1_999);
    expect(q.len()).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(await q.get()).toBe("j");
    await vi.advanceTimersByTimeAsync(3_000);
    expect(await q.get()).toBe("k");
    q.done("j");
    q.done("k");
    await vi.advanceTimersByTimeAsync(20_000);
    expect(q.len()).toBe(0);
  });

  it("hands out low-priority keys only when no normal key waits", async () => {
    const q = new WorkQueue();
    q.add("poll-1", "low");
    q.add("poll-2", "low");
    q.add("new-1");
    q.add("new-2", "normal");
    expect(q.len()).toBe(4);
    expect(await q.get()).toBe("new-1");
    expect(await q.get()).toBe("new-2");
    q.add("new-3");
    expect(await q.get()).toBe("new-3");
    expect(await q.get()).toBe("poll-1");
    expect(await q.get()).toBe("poll-2");
    expect(q.len()).toBe(0);
  });

  it("moves a waiting low key up when it is added as normal, never down, and queues it once", async () => {
    const q = new WorkQueue();
    q.add("a", "low");
    q.add("b", "low");
    q.add("c", "low");
    q.add("b");
    q.add("b", "low");
    expect(q.len()).toBe(3);
    expect(await q.get()).toBe("b");
    expect(await q.get()).toBe("a");
    expect(await q.get()).toBe("c");
    expect(q.len()).toBe(0);
    // b's old place in the low lane is dead: b, done and added low again, is handed
    // out once.
    q.done("b");
    q.add("b", "low");
    expect(await q.get()).toBe("b");
    const next = pendingGet(q);
    await flush();
    expect(next.key).toBeUndefined();
    q.done("b");
    await flush();
    expect(next.key).toBeUndefined();
    q.add("d", "low");
    await flush();
    expect(next.key).toBe("d");
  });

  it("re-queues a key added while processed in the higher of its lanes", async () => {
    const q = new WorkQueue();
    q.add("k");
    await q.get();
    q.add("k", "low");
    q.add("j", "low");
    q.add("k");
    q.done("k");
    expect(await q.get()).toBe("k");
    expect(await q.get()).toBe("j");
  });

  it("hands out deferred keys after normal ones and before low ones, and moves a waiting key up lane by lane", async () => {
    const q = new WorkQueue();
    q.add("poll-1", "low");
    q.add("poll-2", "low");
    q.add("follow-1", "deferred");
    q.add("follow-2", "deferred");
    q.add("new-1");
    // poll-2 gets a follow-up's add, follow-2 a change's; neither goes back down.
    q.add("poll-2", "deferred");
    q.add("follow-2");
    q.add("follow-2", "low");
    q.add("poll-2", "low");
    expect(q.len()).toBe(5);
    const order: string[] = [];
    for (let i = 0; i < 5; i++) order.push((await q.get()) as string);
    expect(order).toEqual(["new-1", "follow-2", "follow-1", "poll-2", "poll-1"]);
    expect(q.len()).toBe(0);
  });

  it("keeps the earliest delay of a key with the earliest lane of its adds", async () => {
    const q = new WorkQueue();
    q.addAfter("a", 1_000, "low");
    q.addAfter("a", 5_000, "deferred");
    q.addAfter("b", 1_000, "deferred");
    q.addAfter("b", 5_000, "low");
    q.addAfter("c", 5_000, "deferred");
    q.addAfter("c", 1_000, "low");
    q.add("x", "low");
    await vi.advanceTimersByTimeAsync(1_000);
    expect([await q.get(), await q.get(), await q.get(), await q.get()]).toEqual([
      "a",
      "b",
      "c",
      "x",
    ]);
  });

  it("keeps the earliest delay of a key and the higher priority of the two", async () => {
    const q = new WorkQueue();
    q.addAfter("k", 1_000, "low");
    q.addAfter("k", 5_000);
    q.addAfter("j", 5_000, "low");
    q.addAfter("j", 1_000, "low");
    q.add("x", "low");
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await q.get()).toBe("k");
    expect(await q.get()).toBe("x");
    expect(await q.get()).toBe("j");
  });

  it("stops handing out work on shutdown and drops queued and delayed keys", async () => {
    const q = new WorkQueue();
    let waiting: string | undefined = "unset";
    void q.get().then((k) => {
      waiting = k;
    });
    q.shutDown();
    await flush();
    expect(waiting).toBeUndefined();
    q.add("late");
    q.addAfter("later", 10);
    expect(q.len()).toBe(0);
    expect(await q.get()).toBeUndefined();
  });

  it("drains in-flight keys within the bound and reports a bound that passed", async () => {
    const q = new WorkQueue();
    q.add("a");
    q.add("b");
    await q.get();
    await q.get();
    q.shutDown();
    const drained = q.drain(1_000);
    q.done("a");
    q.done("b");
    await expect(drained).resolves.toBe(true);

    const q2 = new WorkQueue();
    q2.add("stuck");
    await q2.get();
    q2.shutDown();
    const bounded = q2.drain(1_000);
    await vi.advanceTimersByTimeAsync(1_000);
    await expect(bounded).resolves.toBe(false);
  });

  it("reports depth, adds, latency, work time and retries to its observer", async () => {
    const seen = {
      added: 0,
      depth: [] as number[],
      latency: [] as number[],
      work: [] as number[],
      retries: 0,
    };
    const q = new WorkQueue({
      observer: {
        adds: { inc: () => seen.added++ },
        depth: { set: (n) => seen.depth.push(n) },
        queueLatency: { observe: (s) => seen.latency.push(s) },
        workDuration: { observe: (s) => seen.work.push(s) },
        retries: { inc: () => seen.retries++ },
      },
    });
    q.add("k");
    q.add("k");
    await vi.advanceTimersByTimeAsync(250);
    const k = await q.get();
    await vi.advanceTimersByTimeAsync(500);
    q.done(k ?? "");
    q.addRateLimited("k");
    expect(seen.added).toBe(1);
    expect(seen.depth).toEqual([1, 0]);
    expect(seen.latency).toEqual([0.25]);
    expect(seen.work).toEqual([0.5]);
    expect(seen.retries).toBe(1);
  });
});

describe("ExponentialBackoff and TokenBucket", () => {
  it("caps the backoff at its maximum even after very many failures", () => {
    const b = new ExponentialBackoff({ baseMs: 100, maxMs: 1_000 });
    for (let i = 0; i < 2_000; i++) b.when("k");
    expect(b.when("k")).toBe(1_000);
  });

  it("refills the bucket with time", () => {
    let now = 0;
    const bucket = new TokenBucket({ qps: 2, burst: 1 }, { now: () => new Date(now) });
    expect(bucket.reserve()).toBe(0);
    expect(bucket.reserve()).toBe(500);
    now = 2_000;
    expect(bucket.reserve()).toBe(0);
  });
});
