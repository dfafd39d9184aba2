import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { flowWorkers, laneWorkers } from "./controller-runtime.js";
import { FairSeats } from "./fair-lanes.js";
import { FairTokenBucket } from "./outbound-guards.js";
import { WorkQueue } from "./workqueue.js";

/** Resolves pending promise callbacks without moving fake time. */
const flush = () => vi.advanceTimersByTimeAsync(0);

/** Keys `<flow>/<n>` belong to flow `<flow>`. */
const byPrefix = (key: string) => key.split("/")[0] as string;

describe("fair flows", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("serves the flows in turn, each in its own order", async () => {
    const q = new WorkQueue({ flowOf: byPrefix });
    for (let i = 0; i < 4; i++) q.add(`hot/${i}`);
    q.add("calm/0");
    q.add("calm/1");
    const order: string[] = [];
    for (let i = 0; i < 6; i++) {
      const key = (await q.get()) as string;
      order.push(key);
      q.done(key);
    }
    expect(order).toEqual(["hot/0", "calm/0", "hot/1", "calm/1", "hot/2", "hot/3"]);
  });

  it("leaves another flow as many workers as it has alone while one flow has a backlog", async () => {
    const { pool, perFlow } = flowWorkers(16);
    expect({ pool, perFlow }).toEqual({ pool: 64, perFlow: 16 });
    const q = new WorkQueue({ flowOf: byPrefix, flowLimit: perFlow });
    for (let i = 0; i < 1_000; i++) q.add(`hot/${i}`);
    // Every worker asks; no reconcile finishes in this test.
    const got: (string | undefined)[] = [];
    for (let i = 0; i < pool; i++) void q.get().then((k) => got.push(k));
    await flush();
    expect(got).toHaveLength(16);
    expect(got.every((k) => k?.startsWith("hot/"))).toBe(true);
    for (let i = 0; i < 20; i++) q.add(`calm/${i}`);
    await flush();
    expect(got.slice(16)).toEqual(Array.from({ length: 16 }, (_, i) => `calm/${i}`));
    // A key of the backlog finishing frees its worker for the backlog again.
    q.done(got[0] as string);
    await flush();
    expect(got.at(-1)).toBe("hot/16");
    expect(q.inFlight()).toBe(32);
  });

  it("keeps a quarter of a flow's workers from its routine looks and follow-ups, so a new object of the flow gets one at once", async () => {
    expect([1, 2, 4, 16].map(laneWorkers)).toEqual([
      { deferred: 1, low: 1 },
      { deferred: 1, low: 1 },
      { deferred: 3, low: 2 },
      { deferred: 12, low: 9 },
    ]);
    const perFlow = 16;
    const q = new WorkQueue({ flowOf: byPrefix, flowLimit: perFlow, laneLimits: laneWorkers(16) });
    // A settled fleet's polls and settling objects' follow-ups, each of which would
    // wait long on a saturated budget.
    for (let i = 0; i < 1_000; i++) q.add(`default/poll-${i}`, "low");
    for (let i = 0; i < 1_000; i++) q.add(`default/follow-${i}`, "deferred");
    const got: (string | undefined)[] = [];
    for (let i = 0; i < perFlow; i++) void q.get().then((k) => got.push(k));
    await flush();
    expect(got).toEqual(Array.from({ length: 12 }, (_, i) => `default/follow-${i}`));
    // A create of the same flow finds one of the four workers they left.
    q.add("default/new");
    await flush();
    expect(got.at(-1)).toBe("default/new");
    // A follow-up done frees its worker for the next follow-up, not beyond twelve.
    q.done(got[0] as string);
    await flush();
    expect(got).toHaveLength(14);
    expect(got.at(-1)).toBe("default/follow-12");
    expect(q.inFlight()).toBe(13);
  });

  it("keeps a quarter of the workers routine looks may hold from them, so a follow-up gets one while polls wait for the routine budget", async () => {
    const q = new WorkQueue({ flowOf: byPrefix, flowLimit: 16, laneLimits: laneWorkers(16) });
    for (let i = 0; i < 1_000; i++) q.add(`default/poll-${i}`, "low");
    const got: (string | undefined)[] = [];
    for (let i = 0; i < 16; i++) void q.get().then((k) => got.push(k));
    await flush();
    // Nine polls hold workers (waiting for a list walk at the routine budget, say).
    expect(got).toEqual(Array.from({ length: 9 }, (_, i) => `default/poll-${i}`));
    // A settling object's follow-up goes at once, and before the polls waiting.
    q.add("default/follow-0", "deferred");
    q.add("default/follow-1", "deferred");
    await flush();
    expect(got.slice(9)).toEqual(["default/follow-0", "default/follow-1"]);
    q.done("default/follow-0");
    q.add("default/follow-2", "deferred");
    await flush();
    expect(got.at(-1)).toBe("default/follow-2");
    // Follow-ups and polls together leave four workers to new work.
    for (let i = 3; i < 10; i++) q.add(`default/follow-${i}`, "deferred");
    await flush();
    expect(q.inFlight()).toBe(12);
    expect(got.at(-1)).toBe("default/follow-3");
    q.add("default/new");
    await flush();
    expect(got.at(-1)).toBe("default/new");
  });

  it("shares the pool in turn once more flows than it has room for have backlogs", async () => {
    const { pool, perFlow } = flowWorkers(2);
    const q = new WorkQueue({ flowOf: byPrefix, flowLimit: perFlow });
    for (const flow of ["a", "b", "c", "d", "e"]) {
      for (let i = 0; i < 10; i++) q.add(`${flow}/${i}`);
    }
    const got: (string | undefined)[] = [];
    for (let i = 0; i < pool; i++) void q.get().then((k) => got.push(k));
    await flush();
    // 8 workers: the flows in turn, at most 2 each.
    expect(got).toEqual(["a/0", "b/0", "c/0", "d/0", "e/0", "a/1", "b/1", "c/1"]);
    // A worker done asks again and gets the next flow in turn below its limit.
    const again = async (key: string) => {
      q.done(key);
      void q.get().then((k) => got.push(k));
      await flush();
      return got.at(-1);
    };
    expect(await again("a/0")).toBe("d/1");
    expect(await again("b/0")).toBe("e/1");
    expect(await again("c/0")).toBe("a/2");
  });

  it("hands a low key of one flow out only when no flow has a normal key", async () => {
    const q = new WorkQueue({ flowOf: byPrefix });
    q.add("hot/poll", "low");
    q.add("calm/new");
    q.add("hot/new");
    const order: string[] = [];
    for (let i = 0; i < 3; i++) {
      const key = (await q.get()) as string;
      order.push(key);
      q.done(key);
    }
    expect(order).toEqual(["hot/new", "calm/new", "hot/poll"]);
  });

  it("without flowOf, serves keys in order with every worker", async () => {
    const q = new WorkQueue();
    for (let i = 0; i < 20; i++) q.add(`hot/${i}`);
    const got: (string | undefined)[] = [];
    for (let i = 0; i < 16; i++) void q.get().then((k) => got.push(k));
    await flush();
    expect(got).toEqual(Array.from({ length: 16 }, (_, i) => `hot/${i}`));
  });

  it("spends a flow's backlog from its own bucket: another flow's request goes at once", async () => {
    const bucket = new FairTokenBucket({ qps: 10, burst: 1 });
    const hot: Promise<number>[] = [];
    for (let i = 0; i < 50; i++) hot.push(bucket.take("hot"));
    await vi.advanceTimersByTimeAsync(250);
    expect(await bucket.take("calm")).toBe(0);
    // hot keeps its own pace: its 50th request 4.9 s after the first.
    await vi.advanceTimersByTimeAsync(4_700);
    expect(await hot[49]).toBe(4_900);
  });

  it("gives the ceiling's tokens to the waiting flows in turn", async () => {
    const bucket = new FairTokenBucket({ qps: 1_000, burst: 1_000, total: { qps: 10, burst: 1 } });
    const done: string[] = [];
    const waits: Promise<unknown>[] = [];
    for (let i = 0; i < 50; i++) {
      waits.push(bucket.take("hot").then(() => done.push(`hot/${i}`)));
    }
    await vi.advanceTimersByTimeAsync(250);
    const calmAsked = Date.now();
    let calmWaited = -1;
    waits.push(
      bucket.take("calm").then((ms) => {
        calmWaited = ms;
        done.push("calm");
      }),
    );
    await vi.advanceTimersByTimeAsync(300);
    // One token (100 ms) behind the backlog's next, not 47 tokens.
    expect(calmWaited).toBeGreaterThanOrEqual(0);
    expect(calmWaited).toBeLessThanOrEqual(200);
    expect(Date.now() - calmAsked).toBeGreaterThanOrEqual(calmWaited);
    expect(done.indexOf("calm")).toBeLessThanOrEqual(5);
    await vi.advanceTimersByTimeAsync(10_000);
    await Promise.all(waits);
    expect(done).toHaveLength(51);
    expect(bucket.waiting).toBe(0);
  });

  it("holds every flow to the ceiling's pace together", async () => {
    const bucket = new FairTokenBucket({ qps: 100, burst: 10, total: { qps: 10, burst: 2 } });
    const waited: number[] = [];
    const all = ["a", "b", "c", "a", "b", "c"].map((f) =>
      bucket.take(f).then((ms) => waited.push(ms)),
    );
    await vi.advanceTimersByTimeAsync(1_000);
    await Promise.all(all);
    // Two at once (the ceiling's burst), then one per 100 ms.
    expect(waited).toEqual([0, 0, 100, 200, 300, 400]);
  });

  it("lets a request through at once while both budgets have tokens", async () => {
    const bucket = new FairTokenBucket({ qps: 10, burst: 3, total: { qps: 100, burst: 100 } });
    expect(await bucket.take("a")).toBe(0);
    expect(await bucket.take("b")).toBe(0);
    expect(await bucket.take("a")).toBe(0);
    expect(await bucket.take("a")).toBe(0);
    const fourthOfA = bucket.take("a");
    await vi.advanceTimersByTimeAsync(100);
    expect(await fourthOfA).toBe(100);
  });

  it("keeps a flow's pace after many other flows came and went", async () => {
    const bucket = new FairTokenBucket({ qps: 10, burst: 1 });
    expect(await bucket.take("hot")).toBe(0);
    for (let i = 0; i < 100; i++) await bucket.take(`gone-${i}`);
    const second = bucket.take("hot");
    await vi.advanceTimersByTimeAsync(100);
    expect(await second).toBe(100);
  });

  it("lets a flow alone take every seat, and the next request wait for one set free", async () => {
    const seats = new FairSeats(2);
    expect(seats.acquire("hot")).toBeUndefined();
    expect(seats.acquire("hot")).toBeUndefined();
    let third = false;
    seats.acquire("hot")?.then(() => {
      third = true;
    });
    await flush();
    expect({ third, waiting: seats.waiting }).toEqual({ third: false, waiting: 1 });
    seats.release("hot");
    await flush();
    expect({ third, waiting: seats.waiting }).toEqual({ third: true, waiting: 0 });
  });

  it("gives the next seat set free to a waiting flow holding fewer than the backlog's", async () => {
    const seats = new FairSeats(2);
    seats.acquire("hot");
    seats.acquire("hot");
    const order: string[] = [];
    for (let i = 0; i < 3; i++) seats.acquire("hot")?.then(() => order.push(`hot/${i}`));
    seats.acquire("calm")?.then(() => order.push("calm/0"));
    seats.acquire("calm")?.then(() => order.push("calm/1"));
    // Each seat set free: calm holds fewer, so it goes first, then the flows alternate.
    for (const flow of ["hot", "hot", "calm", "hot", "calm"]) {
      seats.release(flow);
      await flush();
    }
    expect(order).toEqual(["calm/0", "hot/0", "calm/1", "hot/1", "hot/2"]);
  });

  it("frees a seat for the next request once every waiting one was served", async () => {
    const seats = new FairSeats(1);
    seats.acquire("a");
    let served = false;
    seats.acquire("b")?.then(() => {
      served = true;
    });
    seats.release("a");
    await flush();
    seats.release("b");
    expect({ served, waiting: seats.waiting, next: seats.acquire("c") }).toEqual({
      served: true,
      waiting: 0,
      next: undefined,
    });
  });
});
