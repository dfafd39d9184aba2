/**
 * The graceful stop of a LeaderElector when a round of acquire-or-renew is still under
 * way (the API server answers later than the round's timeout, as on a loaded machine,
 * or just as the elector stops): the Lease it lands is released, not left held until
 * it expires.
 */
import type { Logger } from "pino";
import { describe, expect, it } from "vitest";
import type { KubeClient } from "./kube.js";
import { KubeApiError } from "./kube-errors.js";
import { LeaderElector, LeaseFence } from "./leader-election.js";
import type { Clock, KubeObject } from "./resource.js";

type Lease = KubeObject & { spec?: { holderIdentity?: string } };

/**
 * One Lease in memory, written only at the resourceVersion it was read at (as the API
 * server does); `hold` makes the next create or replace wait until `land` is called.
 */
function leaseStore() {
  let lease: Lease | undefined;
  let version = 0;
  let held: (() => void) | undefined;
  let holding = false;
  // An API server that no longer answers (a network partition): requests never end.
  let frozen = false;
  const unanswered = () => new Promise<never>(() => undefined);
  const gate = async () => {
    if (!holding) return;
    holding = false;
    await new Promise<void>((resolve) => {
      held = resolve;
    });
  };
  const write = (obj: Lease): Lease => {
    version += 1;
    lease = structuredClone({
      ...obj,
      metadata: { ...obj.metadata, resourceVersion: String(version) },
    });
    return structuredClone(lease);
  };
  const kube = {
    async get() {
      if (frozen) return unanswered();
      return lease ? structuredClone(lease) : undefined;
    },
    async create(_: unknown, obj: Lease) {
      await gate();
      if (lease) throw new KubeApiError("POST", "/leases", 409, { reason: "AlreadyExists" });
      return write(obj);
    },
    async replace(_: unknown, obj: Lease) {
      await gate();
      if (obj.metadata?.resourceVersion !== lease?.metadata?.resourceVersion) {
        throw new KubeApiError("PUT", "/leases", 409, { reason: "Conflict" });
      }
      return write(obj);
    },
  };
  return {
    kube: kube as unknown as KubeClient,
    holder: () => lease?.spec?.holderIdentity,
    /** The next write waits until {@link land}. */
    hold: () => {
      holding = true;
    },
    /** Whether a write is waiting. */
    waiting: () => held !== undefined,
    land: () => {
      held?.();
      held = undefined;
    },
    /** No request is answered from now on. */
    freeze: () => {
      frozen = true;
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean, timeoutMs = 5_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met");
    await sleep(5);
  }
}

function elector(kube: KubeClient, events: string[], clock?: Clock) {
  return new LeaderElector(kube, {
    ...(clock ? { clock } : {}),
    log: {
      debug: () => undefined,
      info: () => undefined,
      warn: (_: unknown, msg: string) => events.push(`warn: ${msg}`),
      error: (_: unknown, msg: string) => events.push(`error: ${msg}`),
    } as unknown as Logger,
    leaseName: "l",
    leaseNamespace: "ns",
    identity: "me",
    leaseDurationMs: 2_000,
    renewDeadlineMs: 1_500,
    retryPeriodMs: 200,
    onStartedLeading: () => events.push("started"),
    onStoppedLeading: () => events.push("stopped"),
  });
}

describe("LeaderElector.stop", () => {
  it("releases a Lease that a campaign round took after its timeout, though it never led", async () => {
    const store = leaseStore();
    const events: string[] = [];
    const e = elector(store.kube, events);
    store.hold();
    e.start();
    await until(store.waiting);
    await sleep(250); // the round's 200 ms are over: the loop sleeps before the next one
    store.land(); // the create lands now: the Lease is this process's
    await until(() => store.holder() === "me");
    expect(e.isLeader()).toBe(false);
    await e.stop();
    expect(store.holder()).toBeUndefined();
    expect(events).toEqual([]);
  });

  it("releases a Lease that a campaign round wins just as the elector stops", async () => {
    const store = leaseStore();
    const events: string[] = [];
    const e = elector(store.kube, events);
    store.hold();
    e.start();
    await until(store.waiting); // the round's create is under way
    const stopping = e.stop();
    setTimeout(store.land, 20); // and lands (within the round's 200 ms) after the stop
    await stopping;
    expect(store.holder()).toBeUndefined();
    expect(events).toEqual([]);
  });

  it("releases a held Lease at once when no round is under way", async () => {
    const store = leaseStore();
    const e = elector(store.kube, []);
    e.start();
    await until(() => e.isLeader());
    const started = Date.now();
    await e.stop();
    expect(store.holder()).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it("gives up releasing within the renew deadline when the API server no longer answers, so the process exits", async () => {
    const store = leaseStore();
    const events: string[] = [];
    const e = elector(store.kube, events);
    e.start();
    await until(() => e.isLeader());
    store.freeze();
    await e.stop();
    expect(events).toEqual(["started", "warn: could not release the lease; it will expire"]);
  }, 5_000);
});

describe("LeaderElector.mayAct", () => {
  it("is false once the last renewal is a renew deadline old, and loses the leadership right there, before the loop has noticed (a process paused past its lease); false after a release; true while it never led", async () => {
    const store = leaseStore();
    const events: string[] = [];
    let skewMs = 0;
    const e = elector(store.kube, events, { now: () => new Date(Date.now() + skewMs) });
    expect(e.mayAct()).toBe(true);
    e.start();
    await until(() => e.isLeader());
    expect(e.mayAct()).toBe(true);
    // The renew deadline (1.5 s) passes at once, as for a process resumed after a pause.
    skewMs = 1_500;
    expect(e.isLeader()).toBe(true);
    expect(e.mayAct()).toBe(false);
    // Lost before mayAct returned, so the asking call's reconcile is already aborted.
    expect(e.isLeader()).toBe(false);
    expect(events).toEqual([
      "started",
      "error: could not renew the lease in time; leadership lost",
      "stopped",
    ]);
    await sleep(500); // the loop's next round (every 200 ms) reports nothing more
    expect(e.mayAct()).toBe(false);
    expect(events).toHaveLength(3);
    await e.stop();
    const again = elector(store.kube, []);
    again.start();
    await until(() => again.isLeader());
    await again.stop();
    expect(again.mayAct()).toBe(false);
  });
});

describe("LeaderElector's campaign", () => {
  it("does not lead on a round won past the renew deadline (the process paused while its create was under way); it leads once a later round renews the Lease", async () => {
    const store = leaseStore();
    const events: string[] = [];
    let skewMs = 0;
    const e = elector(store.kube, events, { now: () => new Date(Date.now() + skewMs) });
    store.hold();
    e.start();
    await until(store.waiting); // the round's create is under way
    skewMs = 1_500; // a pause of a renew deadline
    store.land(); // the create lands within the round's 200 ms
    await until(() => store.holder() === "me");
    await sleep(50);
    expect(e.isLeader()).toBe(false);
    expect(events).toEqual([]);
    // The Lease is still this process's: the next round renews it, and leads.
    await until(() => e.isLeader());
    expect(events).toEqual(["started"]);
    expect(e.mayAct()).toBe(true);
    await e.stop();
  });
});

describe("LeaderElector.stop's bound", () => {
  it("ends within withinMs, the Lease left to expire, when a renewal hangs on an API server that no longer answers", async () => {
    const store = leaseStore();
    const events: string[] = [];
    const e = elector(store.kube, events);
    e.start();
    await until(() => e.isLeader());
    store.freeze();
    await sleep(300); // a renewal round is under way, unanswered
    const started = Date.now();
    await e.stop({ withinMs: 400 });
    // Within the 400 ms given, not a renew deadline (1.5 s) per wait.
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(e.isLeader()).toBe(false);
    expect(store.holder()).toBe("me");
    expect(events).toEqual(["started", "warn: could not release the lease; it will expire"]);
  });
});

describe("LeaseFence", () => {
  it("lets the process act until a renew deadline after the last renewal, and never again once released, even if a round in flight renews after the release", () => {
    let now = 1_000;
    const fence = new LeaseFence({ now: () => new Date(now) });
    const { mayAct } = fence;
    expect(mayAct()).toBe(true);
    fence.renewed(1_000, 500);
    now = 1_499;
    expect(mayAct()).toBe(true);
    now = 1_500;
    expect(mayAct()).toBe(false);
    fence.renewed(1_500, 500);
    expect(mayAct()).toBe(true);
    fence.released();
    expect(mayAct()).toBe(false);
    fence.renewed(1_500, 500);
    expect(mayAct()).toBe(false);
  });

  it("tells whenLapsed's callback each time it answers no, before it returns", () => {
    let now = 1_000;
    const fence = new LeaseFence({ now: () => new Date(now) });
    const told: boolean[] = [];
    fence.whenLapsed(() => told.push(true));
    fence.renewed(1_000, 500);
    expect(fence.mayAct()).toBe(true);
    now = 1_500;
    expect(fence.mayAct()).toBe(false);
    expect(told).toEqual([true]);
  });
});
