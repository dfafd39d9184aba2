import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { InformerCache } from "./cache.js";
import { controller, type Reconciler } from "./controller.js";
import {
  OwnWriteEchoFilter,
  type ReconcileAttempt,
  reconcileKey,
  TerminalHolds,
} from "./controller-keys.js";
import { EventRecorder } from "./events.js";
import type { KubeClient } from "./kube.js";
import { RuntimeMetrics } from "./metrics.js";
import { QUIET_ROUTINE_TIMEOUTS } from "./reconcile-failure.js";
import { type KubeObject, type ResourceDescriptor, systemClock } from "./resource.js";
import { type QueuePriority, WorkQueue } from "./workqueue.js";

const looks: ResourceDescriptor = {
  group: "t.io",
  version: "v1",
  plural: "looks",
  kind: "L",
  namespaced: true,
};

/** A reconcile that never ends: it reaches the 1 s deadline every time. */
const hangs: Reconciler = () => new Promise(() => undefined);

/** One attempt's surroundings: a real queue, a 1 s deadline, no objects cached. */
function attempt(queue: WorkQueue, reconcile: Reconciler) {
  const log = pino({ level: "silent" });
  const kube = { forReconcile: () => kube } as unknown as KubeClient;
  const policyCalls: string[] = [];
  const definition = controller("widgets")
    .for(looks)
    .onError((key) => {
      policyCalls.push(key.name);
    })
    .reconcile(reconcile);
  const a: ReconcileAttempt = {
    definition,
    rt: {
      kube,
      cache: { get: () => undefined } as unknown as InformerCache,
      clock: systemClock,
      log,
      events: new EventRecorder(kube, { controller: "test", instance: "t", log }),
      metrics: new RuntimeMetrics({ processMetrics: false }),
      concurrency: 1,
      resyncPeriodMs: 0,
      resyncJitter: 0,
      reconcileTimeoutMs: 1_000,
    },
    log,
    queue,
    signal: new AbortController().signal,
    terminal: new TerminalHolds(),
    echoes: new OwnWriteEchoFilter({ isOwnWrite: () => false, isProcessing: () => false }),
    quietTimeouts: new Map(),
  };
  return { a, policyCalls };
}

/** Reconciles `key`, handed out of `queue`, to its deadline, and marks it done. */
async function runToDeadline(queue: WorkQueue, a: ReconcileAttempt, key: string): Promise<void> {
  const run = reconcileKey(a, key);
  await vi.advanceTimersByTimeAsync(1_000);
  await run;
  queue.done(key);
}

describe("a reconcile's deadline by lane", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each<QueuePriority>(["deferred", "low"])(
    "looks at a %s key that reached the deadline again in its own lane, quietly, up to the limit in a row",
    async (lane) => {
      const queue = new WorkQueue();
      const { a, policyCalls } = attempt(queue, hangs);
      queue.add("ns/look", lane);
      expect(await queue.get()).toBe("ns/look");
      for (let i = 0; i < QUIET_ROUTINE_TIMEOUTS; i++) {
        await runToDeadline(queue, a, "ns/look");
        // A key of each lane waits when the look is due again, one deadline later.
        queue.add("ns/work");
        queue.add("ns/follow-up", "deferred");
        queue.add("ns/poll", "low");
        await vi.advanceTimersByTimeAsync(999);
        expect(queue.len()).toBe(3);
        await vi.advanceTimersByTimeAsync(1);
        const order: string[] = [];
        for (let k = 0; k < 4; k++) {
          const key = (await queue.get()) as string;
          order.push(key);
          if (key !== "ns/look") queue.done(key);
        }
        // Handed out as a key of its own lane: after work, and after the keys of its lane
        // that waited before it.
        expect(order).toEqual(
          lane === "deferred"
            ? ["ns/work", "ns/follow-up", "ns/look", "ns/poll"]
            : ["ns/work", "ns/follow-up", "ns/poll", "ns/look"],
        );
      }
      expect(policyCalls).toEqual([]);
      // One more in a row fails as any reconcile: the error policy runs.
      await runToDeadline(queue, a, "ns/look");
      expect(policyCalls).toEqual(["look"]);
    },
  );

  it("fails a normal key at its first deadline", async () => {
    const queue = new WorkQueue();
    const { a, policyCalls } = attempt(queue, hangs);
    queue.add("ns/work");
    await runToDeadline(queue, a, "ns/work");
    expect(policyCalls).toEqual(["work"]);
  });
});

/** The terminal holds of a controller's keys (which changes release them, the slow retry). */

function object(generation: number, labels: Record<string, string> = {}, phase = "Failed") {
  return {
    metadata: { namespace: "ml", name: "vol", generation, labels },
    status: { phase },
  } as KubeObject;
}

describe("TerminalHolds", () => {
  it("holds a key until its object changes in a part a reconcile acts on", () => {
    const holds = new TerminalHolds();
    expect(holds.hold("ml/vol", object(1), false)).toBeUndefined();
    expect(holds.keys()).toEqual(["ml/vol"]);
    expect(holds.holdsUnchanged("ml/vol", object(1, {}, "Other"))).toBe(true);
    expect(holds.holdsUnchanged("ml/vol", object(2))).toBe(false);
    expect(holds.holdsUnchanged("ml/vol", object(1, { a: "b" }))).toBe(false);
    holds.release("ml/vol");
    expect(holds.has("ml/vol")).toBe(false);
  });

  it("holds nothing for an object that is gone", () => {
    const holds = new TerminalHolds();
    holds.hold("ml/vol", undefined, false);
    expect(holds.keys()).toEqual([]);
  });

  it("retries an external hold on a slow doubling backoff, reset by a success", () => {
    const holds = new TerminalHolds({ baseMs: 1000, maxMs: 3000 });
    expect(holds.hold("ml/vol", object(1), true)).toBe(1000);
    expect(holds.hold("ml/vol", object(1), true)).toBe(2000);
    expect(holds.hold("ml/vol", object(1), true)).toBe(3000);
    // A release (the object changed) keeps the backoff; a success resets it.
    holds.release("ml/vol");
    expect(holds.hold("ml/vol", object(1), true)).toBe(3000);
    holds.succeeded("ml/vol");
    expect(holds.has("ml/vol")).toBe(false);
    expect(holds.hold("ml/vol", object(1), true)).toBe(1000);
  });

  it("defaults to 15 s for the first retry of an external hold", () => {
    expect(new TerminalHolds().hold("ml/vol", object(1), true)).toBe(15_000);
  });

  it("resets the backoff when the hold turns out not to be external", () => {
    const holds = new TerminalHolds({ baseMs: 1000, maxMs: 60_000 });
    holds.hold("ml/vol", object(1), true);
    holds.hold("ml/vol", object(1), false);
    expect(holds.hold("ml/vol", object(1), true)).toBe(1000);
  });

  it("clear releases every key and resets the backoff of the keys given", () => {
    const holds = new TerminalHolds({ baseMs: 1000, maxMs: 60_000 });
    holds.hold("ml/a", object(1), true);
    holds.hold("ml/b", object(1), true);
    holds.clear(["ml/a"]);
    expect(holds.keys()).toEqual([]);
    expect(holds.hold("ml/a", object(1), true)).toBe(1000);
    expect(holds.hold("ml/b", object(1), true)).toBe(2000);
  });
});
