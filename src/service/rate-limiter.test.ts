import { describe, expect, it } from "vitest";
import { type CallPriority, TokenBucket } from "./rate-limiter.js";

/** A clock and sleep that move only by the sleeps requested. */
function virtualTime() {
  let now = 0;
  const sleeps: number[] = [];
  return {
    now: () => now,
    sleep: async (ms: number) => {
      sleeps.push(ms);
      now += ms;
    },
    sleeps,
  };
}

describe("TokenBucket", () => {
  it("lets a burst through at once", async () => {
    const t = virtualTime();
    const bucket = new TokenBucket({ ratePerSecond: 10, burst: 3 }, t.now, t.sleep);
    await Promise.all([bucket.take(), bucket.take(), bucket.take()]);
    expect(t.sleeps).toEqual([]);
  });

  it("spaces requests beyond the burst at the sustained rate", async () => {
    const t = virtualTime();
    const bucket = new TokenBucket({ ratePerSecond: 10, burst: 2 }, t.now, t.sleep);
    for (let i = 0; i < 6; i++) await bucket.take();
    expect(t.now()).toBe(400);
  });

  it("serves waiting callers in arrival order", async () => {
    const t = virtualTime();
    const bucket = new TokenBucket({ ratePerSecond: 100, burst: 1 }, t.now, t.sleep);
    const order: number[] = [];
    await Promise.all([0, 1, 2, 3].map((i) => bucket.take().then(() => order.push(i))));
    expect(order).toEqual([0, 1, 2, 3]);
  });

  it("serves every waiting normal caller before a low one, also one that came later", async () => {
    const t = virtualTime();
    const bucket = new TokenBucket({ ratePerSecond: 100, burst: 1 }, t.now, t.sleep);
    const order: string[] = [];
    const take = (name: string, priority?: "low") =>
      bucket.take(priority).then(() => order.push(name));
    await bucket.take();
    const first = [take("poll-1", "low"), take("poll-2", "low"), take("create-1")];
    expect(bucket.waitingCallers()).toEqual({ normal: 1, deferred: 0, low: 2 });
    // Arrives while the others wait for the next token.
    const late = take("create-2");
    await Promise.all([...first, late]);
    expect(order).toEqual(["create-1", "create-2", "poll-1", "poll-2"]);
    expect(t.now()).toBe(40);
  });

  it("refills while idle but never beyond the burst", async () => {
    let now = 0;
    const bucket = new TokenBucket({ ratePerSecond: 1, burst: 2 }, () => now);
    await bucket.take();
    await bucket.take();
    now = 60_000;
    expect(bucket.available()).toBe(2);
  });

  it("refuses a rate that could never refill", () => {
    expect(() => new TokenBucket({ ratePerSecond: 0, burst: 1 })).toThrow(/ratePerSecond/);
  });

  it("estimates the wait of a caller arriving now from the callers ahead and the refill rate", () => {
    const t = virtualTime();
    const bucket = new TokenBucket({ ratePerSecond: 2, burst: 1 }, t.now, async () => {
      await new Promise(() => undefined);
    });
    expect(bucket.waitEstimateMs()).toBe(0);
    void bucket.take();
    // The token is gone; the next caller waits one refill (500 ms).
    expect(bucket.waitEstimateMs()).toBe(500);
    void bucket.take();
    void bucket.take("low");
    // One normal caller ahead: a normal caller waits two refills, a low one three.
    expect(bucket.waitEstimateMs()).toBe(1000);
    expect(bucket.waitEstimateMs("low")).toBe(1500);
  });

  it("gives bounced callers later slots spread at the refill rate", () => {
    const t = virtualTime();
    const bucket = new TokenBucket({ ratePerSecond: 2, burst: 1 }, t.now, async () => {
      await new Promise(() => undefined);
    });
    void bucket.take();
    // The next token comes in 500 ms; bounced callers get 500, 1000, 1500 ms.
    expect([1, 2, 3].map(() => bucket.reserveLaterSlotMs())).toEqual([500, 1000, 1500]);
  });
});

describe("TokenBucket routine budget", () => {
  it("paces routine calls at their share of the rate and says how much slower they ran", async () => {
    const t = virtualTime();
    // 50/s, a fifth for routine calls: 10/s, a burst of 20 of them.
    const bucket = new TokenBucket({ ratePerSecond: 50, burst: 100 }, t.now, t.sleep, 0.2);
    const stretched: number[] = [];
    for (let i = 0; i < 40; i++) stretched.push(await bucket.take("low"));
    // 20 at once (the routine burst), then 20 more at 10/s.
    expect(t.now()).toBe(2_000);
    expect(stretched.slice(0, 20).every((ms) => ms === 0)).toBe(true);
    expect(stretched.slice(20).reduce((a, b) => a + b, 0)).toBe(2_000);
  });

  it("lets creates through at the full rate while routine calls wait for their budget", async () => {
    const t = virtualTime();
    const bucket = new TokenBucket({ ratePerSecond: 50, burst: 1 }, t.now, t.sleep, 0.2);
    await bucket.take();
    const order: string[] = [];
    const polls = Array.from({ length: 3 }, (_, i) =>
      bucket.take("low").then(() => order.push(`poll-${i}`)),
    );
    const creates = Array.from({ length: 5 }, (_, i) =>
      bucket.take().then(() => order.push(`create-${i}`)),
    );
    await Promise.all([...polls, ...creates]);
    // Every create first, 20 ms apart (at 100 ms); then the polls at 10/s from 120 ms.
    expect(order.slice(0, 5)).toEqual(["create-0", "create-1", "create-2", "create-3", "create-4"]);
    expect(order.slice(5)).toEqual(["poll-0", "poll-1", "poll-2"]);
    expect(t.now()).toBe(320);
  });

  it("lets a create arriving while a routine caller waits for the budget through at once", async () => {
    // Sleeps end only when the test moves the clock.
    let now = 0;
    const timers: Array<{ at: number; done: () => void }> = [];
    const sleep = (ms: number) =>
      new Promise<void>((done) => {
        timers.push({ at: now + ms, done });
      });
    const advance = async (ms: number) => {
      now += ms;
      for (const t of timers.filter((t) => t.at <= now)) t.done();
      await new Promise((r) => setImmediate(r));
    };
    // 50/s, a fiftieth for routine calls: 1/s, a routine burst of 2.
    const bucket = new TokenBucket({ ratePerSecond: 50, burst: 100 }, () => now, sleep, 0.02);
    await bucket.take("low");
    await bucket.take("low");
    const order: string[] = [];
    const poll = bucket.take("low").then((held) => order.push(`poll held ${held} ms`));
    await advance(10);
    expect(order).toEqual([]);
    const create = bucket.take().then(() => order.push(`create at ${now} ms`));
    await advance(0);
    expect(order).toEqual(["create at 10 ms"]);
    await create;
    for (let i = 0; i < 100 && order.length < 2; i++) await advance(10);
    await poll;
    // The poll still waited its budget's second, and says so.
    expect(order).toEqual(["create at 10 ms", "poll held 1000 ms"]);
    expect(now).toBe(1_000);
  });

  it("counts a routine caller's wait in its estimate, so a saturated connection bounces it", () => {
    const t = virtualTime();
    const bucket = new TokenBucket({ ratePerSecond: 50, burst: 100 }, t.now, t.sleep, 0.2);
    for (let i = 0; i < 20; i++) void bucket.take("low");
    expect(bucket.waitEstimateMs("normal")).toBe(0);
    expect(bucket.waitEstimateMs("low")).toBeGreaterThanOrEqual(100);
  });

  it("serves a follow-up read (deferred) after the creates and before routine calls, at the full rate, outside the budget", async () => {
    const t = virtualTime();
    // 50/s, a fifth for routine calls: 10/s, a routine burst of 1.
    const bucket = new TokenBucket({ ratePerSecond: 50, burst: 5 }, t.now, t.sleep, 0.2);
    for (let i = 0; i < 5; i++) await bucket.take();
    const order: string[] = [];
    const took = (name: string, priority: CallPriority) =>
      bucket.take(priority).then((stretch) => order.push(`${name}${stretch ? " held" : ""}`));
    const waits = [
      took("poll-0", "low"),
      took("poll-1", "low"),
      took("follow-up-0", "deferred"),
      took("follow-up-1", "deferred"),
      took("follow-up-2", "deferred"),
      took("create", "normal"),
    ];
    const estimate = (p: CallPriority) => bucket.waitEstimateMs(p);
    expect(estimate("normal")).toBeLessThan(estimate("deferred"));
    expect(estimate("deferred")).toBeLessThan(estimate("low"));
    await Promise.all(waits);
    expect(order).toEqual([
      "create",
      "follow-up-0",
      "follow-up-1",
      "follow-up-2",
      "poll-0",
      "poll-1 held",
    ]);
    // Five tokens at 50/s (20 ms each); the second poll waited for the routine budget.
    expect(t.now()).toBeGreaterThanOrEqual(100);
  });
});
