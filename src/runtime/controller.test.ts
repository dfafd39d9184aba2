import { setImmediate as realSetImmediate } from "node:timers/promises";
import { type Logger, pino } from "pino";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { FakeListerWatcher } from "../../test/support/fake-listwatch.js";
import { InformerCache } from "./cache.js";
import {
  controller,
  type ReconcileContext,
  type ReconcileResult,
  type SettledCheck,
  type WatchPredicate,
} from "./controller.js";
import { RunningController } from "./controller-runner.js";
import { ConflictError, RetryableError, TerminalError } from "./errors.js";
import { EventRecorder } from "./events.js";
import type { KubeClient } from "./kube.js";
import { KubeApiError } from "./kube-errors.js";
import { KubeUnreachableError } from "./kube-unreachable.js";
import { looksSettled } from "./looks-settled.js";
import { RuntimeMetrics } from "./metrics.js";
import {
  cacheId,
  type KubeObject,
  type ObjectKey,
  type ResourceDescriptor,
  systemClock,
} from "./resource.js";

const widgets: ResourceDescriptor = {
  group: "test.aidc.io",
  version: "v1",
  plural: "widgets",
  kind: "Widget",
  namespaced: true,
};
const gadgets: ResourceDescriptor = { ...widgets, plural: "gadgets", kind: "Gadget" };
/** Objects the widgets controller makes (owns), cached only when labelled. */
const parts: ResourceDescriptor = {
  ...widgets,
  plural: "parts",
  kind: "Part",
  labelSelector: "test.aidc.io/widget",
};

let rv = 100;
const widget = (
  name: string,
  extra: Partial<KubeObject["metadata"]> = {},
  status?: unknown,
): KubeObject => ({
  apiVersion: "test.aidc.io/v1",
  kind: "Widget",
  metadata: {
    name,
    namespace: "ns",
    uid: `uid-${name}`,
    generation: 1,
    resourceVersion: String(rv++),
    ...extra,
  },
  ...(status ? { status } : {}),
});

function harness(
  reconcile: (key: ObjectKey, ctx: ReconcileContext) => Promise<ReconcileResult>,
  options: {
    concurrency?: number;
    settled?: SettledCheck;
    holdBackoff?: { baseMs: number; maxMs: number };
    reconcileTimeoutMs?: number;
    statusChanges?: boolean;
    extraKeys?: ObjectKey[];
    resyncPeriodMs?: number;
    gadgetsWhen?: WatchPredicate;
    /** What the error policy's n-th call (from 1) throws, if anything. */
    policyThrows?: (n: number) => Error | undefined;
    /** Default: silent. */
    log?: Logger;
  } = {},
) {
  const apis = new Map<string, FakeListerWatcher>();
  const api = (res: ResourceDescriptor) => {
    const id = cacheId(res);
    let a = apis.get(id);
    if (!a) {
      a = new FakeListerWatcher();
      apis.set(id, a);
    }
    return a;
  };
  const created: KubeObject[] = [];
  /** resourceVersions the fake client "wrote" (KubeClient.isOwnWrite). */
  const ownWrites = new Set<string>();
  /** The views `ctx.kube` and `ctx.events` were made of, one per reconcile and kind of view. */
  const views: { flow: string; signal: AbortSignal }[] = [];
  const fakeKube = {
    forReconcile: (view: { flow: string; signal: AbortSignal }) => {
      views.push(view);
      return fakeKube;
    },
    create: async (_res: ResourceDescriptor, body: KubeObject) => {
      created.push(body);
      return body;
    },
    patch: async () => ({}),
    isOwnWrite: (_res: ResourceDescriptor, o: KubeObject) =>
      ownWrites.has(o.metadata?.resourceVersion ?? ""),
  } as unknown as KubeClient;
  const log = options.log ?? pino({ level: "silent" });
  const cache = new InformerCache(fakeKube, { listerWatcher: (res) => api(res) });
  const metrics = new RuntimeMetrics({ processMetrics: false });
  const policyCalls: string[] = [];
  const builder = controller("widgets");
  if (options.extraKeys) builder.alsoReconciles(() => options.extraKeys ?? []);
  const def = builder
    .for(widgets, { statusChanges: options.statusChanges ?? false })
    .owns(parts)
    .watches(
      gadgets,
      (g) => [{ namespace: "ns", name: String((g.spec as { widget: string }).widget) }],
      options.gadgetsWhen ? { when: options.gadgetsWhen } : {},
    )
    .onError((key, err) => {
      policyCalls.push(`${key.name}: ${(err as Error).message}`);
      const thrown = options.policyThrows?.(policyCalls.length);
      if (thrown) throw thrown;
    })
    .concurrency(options.concurrency ?? 1)
    .settled(options.settled ?? looksSettled)
    .reconcile((key, ctx) => reconcile(key, ctx));
  const events = new EventRecorder(fakeKube, { controller: "test", instance: "t", log });
  const running = new RunningController(def, {
    kube: fakeKube,
    cache,
    clock: systemClock,
    log,
    events,
    metrics,
    concurrency: 1,
    resyncPeriodMs: options.resyncPeriodMs ?? 0,
    resyncJitter: 0,
    ...(options.holdBackoff ? { holdBackoff: options.holdBackoff } : {}),
    ...(options.reconcileTimeoutMs ? { reconcileTimeoutMs: options.reconcileTimeoutMs } : {}),
  });
  cache.informerFor(widgets);
  cache.informerFor(gadgets);
  cache.informerFor(parts);
  return { api, cache, running, metrics, created, policyCalls, events, ownWrites, views };
}

/**
 * Runs what is due now without moving fake time, turns of the real event loop included
 * (a worker takes one between keys: controller-keys.ts).
 */
const settle = async () => {
  for (let i = 0; i < 20; i++) {
    await vi.advanceTimersByTimeAsync(0);
    await realSetImmediate();
  }
};

/** The status of an object Ready for its generation 1. */
const readyStatus = {
  conditions: [
    {
      type: "Ready",
      status: "True",
      reason: "Available",
      message: "",
      lastTransitionTime: "2026-11-23T00:00:00Z",
      observedGeneration: 1,
    },
  ],
};

describe("a running controller", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("reconciles every cached object at start and again when one changes", async () => {
    const seen: string[] = [];
    const h = harness(async (k) => {
      seen.push(k.name);
      return {};
    });
    h.api(widgets).items = [widget("a"), widget("b")];
    h.cache.start();
    await h.cache.waitForSync();
    h.running.start();
    await settle();
    expect(seen).toEqual(["a", "b"]);
    h.api(widgets).emit("MODIFIED", widget("a", { generation: 2 }));
    await settle();
    expect(seen).toEqual(["a", "b", "a"]);
    await h.running.stop(1_000);
    await h.cache.stop();
  });

  it("does not reconcile again for a change of status alone, but does for annotations and labels", async () => {
    const seen: string[] = [];
    const h = harness(async (k) => {
      seen.push(k.name);
      return {};
    });
    h.api(widgets).items = [widget("a")];
    h.cache.start();
    await h.cache.waitForSync();
    h.running.start();
    await settle();
    expect(seen).toEqual(["a"]);
    h.api(widgets).emit("MODIFIED", widget("a", {}, { phase: "Ready" }));
    await settle();
    expect(seen).toEqual(["a"]);
    h.api(widgets).emit("MODIFIED", widget("a", { annotations: { x: "1" } }, { phase: "Ready" }));
    await settle();
    expect(seen).toEqual(["a", "a"]);
    h.api(widgets).emit(
      "MODIFIED",
      widget("a", { annotations: { x: "1" }, labels: { y: "2" } }, { phase: "Ready" }),
    );
    await settle();
    expect(seen).toEqual(["a", "a", "a"]);
    await h.running.stop(1_000);
    await h.cache.stop();
  });

  it("with statusChanges, reconciles for a change of status alone and for the echo of a write", async () => {
    const seen: string[] = [];
    const h = harness(
      async (k) => {
        seen.push(k.name);
        return {};
      },
      { statusChanges: true },
    );
    h.api(widgets).items = [widget("a")];
    h.cache.start();
    await h.cache.waitForSync();
    h.running.start();
    await settle();
    h.api(widgets).emit("MODIFIED", widget("a", {}, { phase: "Ready" }));
    await settle();
    expect(seen).toEqual(["a", "a"]);
    const echo = widget("a", {}, { phase: "Done" });
    h.ownWrites.add(echo.metadata?.resourceVersion ?? "");
    h.api(widgets).emit("MODIFIED", echo);
    await settle();
    expect(seen).toEqual(["a", "a", "a"]);
    await h.running.stop(1_000);
    await h.cache.stop();
  });

  it("reconciles the controller owner of an owned object that changes or goes, and nothing for another owner", async () => {
    const seen: string[] = [];
    const h = harness(async (k) => {
      seen.push(k.name);
      return {};
    });
    const part = (name: string, owner: object) => ({
      apiVersion: "test.aidc.io/v1",
      kind: "Part",
      metadata: { name, namespace: "ns", resourceVersion: String(rv++), ownerReferences: [owner] },
    });
    const ownedByA = part("p", {
      apiVersion: "test.aidc.io/v1",
      kind: "Widget",
      name: "a",
      uid: "uid-a",
      controller: true,
    });
    h.api(parts).items = [ownedByA];
    h.cache.start();
    await h.cache.waitForSync();
    h.running.start();
    await settle();
    expect(seen).toEqual([]);
    h.api(parts).emit("DELETED", ownedByA);
    await settle();
    expect(seen).toEqual(["a"]);
    // Not the controller owner, or an owner of another kind: nothing to reconcile.
    h.api(parts).emit(
      "ADDED",
      part("q", { apiVersion: "test.aidc.io/v1", kind: "Widget", name: "b", uid: "uid-b" }),
    );
    h.api(parts).emit(
      "ADDED",
      part("r", { apiVersion: "v1", kind: "Gadget", name: "c", uid: "uid-c", controller: true }),
    );
    await settle();
    expect(seen).toEqual(["a"]);
    await h.running.stop(1_000);
    await h.cache.stop();
  });

  it("does not reconcile again for the echo of its own write, but does for anyone else's", async () => {
    const seen: string[] = [];
    const h = harness(async (k) => {
      seen.push(k.name);
      return {};
    });
    h.api(widgets).items = [widget("a")];
    h.cache.start();
    await h.cache.waitForSync();
    h.running.start();
    await settle();
    expect(seen).toEqual(["a"]);
    const echo = widget("a", { annotations: { "aidc.io/x": "1" } });
    h.ownWrites.add(echo.metadata?.resourceVersion ?? "");
    h.api(widgets).emit("MODIFIED", echo);
    await settle();
    expect(seen).toEqual(["a"]);
    h.api(widgets).emit("MODIFIED", widget("a", { annotations: { "aidc.io/x": "2" } }));
    await settle();
    expect(seen).toEqual(["a", "a"]);
    // A new generation made through the operator's own client still counts.
    const specWrite = widget("a", { generation: 2, annotations: { "aidc.io/x": "2" } });
    h.ownWrites.add(specWrite.metadata?.resourceVersion ?? "");
    h.api(widgets).emit("MODIFIED", specWrite);
    await settle();
    expect(seen).toEqual(["a", "a", "a"]);
    await h.running.stop(1_000);
    await h.cache.stop();
  });

  it("does not run again for an echo that arrives before its write's answer, but does for another change meanwhile", async () => {
    const seen: string[] = [];
    let during: (() => void) | undefined;
    const h = harness(async (k) => {
      seen.push(k.name);
      // The watch delivers the change while the reconcile still runs; the write's
      // answer (which tells the client it was its own) comes after.
      const act = during;
      during = undefined;
      act?.();
      await settle();
      return {};
    });
    h.api(widgets).items = [widget("a")];
    h.cache.start();
    await h.cache.waitForSync();
    const echo = widget("a", { annotations: { "aidc.io/x": "1" } });
    during = () => {
      h.api(widgets).emit("MODIFIED", echo);
      h.ownWrites.add(echo.metadata?.resourceVersion ?? "");
    };
    h.running.start();
    await settle();
    await settle();
    expect(seen).toEqual(["a"]);
    // Now someone else changes the object while the reconcile runs: it runs again.
    during = () => {
      h.api(widgets).emit("MODIFIED", widget("a", { annotations: { "aidc.io/x": "2" } }));
    };
    h.api(widgets).emit("MODIFIED", widget("a", { annotations: { "aidc.io/x": "3" } }));
    await settle();
    await settle();
    expect(seen).toEqual(["a", "a", "a"]);
    await h.running.stop(1_000);
    await h.cache.stop();
  });

  it.each([
    { failure: "terminally", error: () => new TerminalError("Refused", "the service refused it") },
    { failure: "retryably", error: () => new RetryableError("Unavailable", "try again later") },
  ])(
    "does not run again at once for the echoes of the writes of a reconcile that failed $failure",
    async ({ error }) => {
      // A create refused after its pending marker was written and removed: the echoes of
      // those writes (arriving before their answers) ask for nothing; only the error's
      // own policy (a terminal hold, a backoff) decides when the object runs again.
      const seen: string[] = [];
      let during: (() => void) | undefined;
      const h = harness(async (k) => {
        seen.push(k.name);
        const act = during;
        during = undefined;
        act?.();
        await settle();
        throw error();
      });
      h.api(widgets).items = [widget("a")];
      h.cache.start();
      await h.cache.waitForSync();
      during = () => {
        for (const x of ["1", "2"]) {
          const echo = widget("a", { annotations: { "aidc.io/x": x } });
          h.api(widgets).emit("MODIFIED", echo);
          h.ownWrites.add(echo.metadata?.resourceVersion ?? "");
        }
      };
      h.running.start();
      await settle();
      await settle();
      expect(seen).toEqual(["a"]);
      await h.running.stop(1_000);
      await h.cache.stop();
    },
  );

  it("reconciles the keys that stand for no object at start and at every resync", async () => {
    const seen: string[] = [];
    const h = harness(
      async (k) => {
        seen.push(k.name);
        return {};
      },
      { extraKeys: [{ namespace: "", name: "_default" }], resyncPeriodMs: 60_000 },
    );
    h.api(widgets).items = [widget("a")];
    h.cache.start();
    await h.cache.waitForSync();
    h.running.start();
    await settle();
    expect(seen.sort()).toEqual(["_default", "a"]);
    await vi.advanceTimersByTimeAsync(60_000);
    await settle();
    expect(seen.sort()).toEqual(["_default", "_default", "a", "a"]);
    await h.running.stop(1_000);
    await h.cache.stop();
  });

  it("reconciles again after requeueAfterMs", async () => {
    let count = 0;
    const h = harness(async () => {
      count++;
      return { requeueAfterMs: 30_000 };
    });
    h.api(widgets).items = [widget("a")];
    h.cache.start();
    await h.cache.waitForSync();
    h.running.start();
    await settle();
    expect(count).toBe(1);
    await vi.advanceTimersByTimeAsync(29_999);
    expect(count).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(count).toBe(2);
    await h.running.stop(1_000);
    await h.cache.stop();
  });

  it("at start, reconciles objects with work before the settled ones", async () => {
    const seen: string[] = [];
    const h = harness(async (k) => {
      seen.push(k.name);
      return {};
    });
    h.api(widgets).items = [
      widget("ready", {}, readyStatus),
      widget("new"),
      widget("ready-for-an-older-generation", { generation: 2 }, readyStatus),
      widget("deleting", { deletionTimestamp: "2026-11-23T00:00:00Z" }, readyStatus),
      widget("also-ready", {}, readyStatus),
    ];
    h.cache.start();
    await h.cache.waitForSync();
    h.running.start();
    await settle();
    expect(seen).toEqual([
      "new",
      "ready-for-an-older-generation",
      "deleting",
      "ready",
      "also-ready",
    ]);
    await h.running.stop(1_000);
    await h.cache.stop();
  });

  it("asks the controller's own settled check when it has one", async () => {
    const seen: string[] = [];
    const h = harness(
      async (k) => {
        seen.push(k.name);
        return {};
      },
      { settled: (o) => o.metadata?.labels?.done === "yes" },
    );
    h.api(widgets).items = [
      widget("done", { labels: { done: "yes" } }),
      widget("ready", {}, readyStatus),
    ];
    h.cache.start();
    await h.cache.waitForSync();
    h.running.start();
    await settle();
    expect(seen).toEqual(["ready", "done"]);
    await h.running.stop(1_000);
    await h.cache.stop();
  });

  it("runs a routine (low-priority) requeue only after the keys with work", async () => {
    const seen: string[] = [];
    let release: () => void = () => {};
    const h = harness(async (k) => {
      seen.push(k.name);
      if (k.name === "block") await new Promise<void>((r) => (release = r));
      return k.name === "settled" ? { requeueAfterMs: 1_000, priority: "low" } : {};
    });
    h.api(widgets).items = [widget("settled", {}, readyStatus)];
    h.cache.start();
    await h.cache.waitForSync();
    h.running.start();
    await settle();
    expect(seen).toEqual(["settled"]);
    // The only worker is busy while the poll comes due and two new objects arrive.
    h.api(widgets).emit("ADDED", widget("block"));
    await settle();
    await vi.advanceTimersByTimeAsync(1_000);
    h.api(widgets).emit("ADDED", widget("new-1"));
    h.api(widgets).emit("ADDED", widget("new-2"));
    await settle();
    release();
    await settle();
    expect(seen).toEqual(["settled", "block", "new-1", "new-2", "settled"]);
    await h.running.stop(1_000);
    await h.cache.stop();
  });

  it("exports its reconcile and queue counters at 0 from its start, as controller-runtime and client-go do", async () => {
    const h = harness(async () => ({}));
    h.cache.start();
    await h.cache.waitForSync();
    h.running.start();
    const text = await h.metrics.text();
    await h.running.stop(1_000);
    await h.cache.stop();
    for (const line of [
      'controller_runtime_reconcile_total{controller="widgets",result="success"} 0',
      'controller_runtime_reconcile_total{controller="widgets",result="error"} 0',
      'controller_runtime_reconcile_total{controller="widgets",result="requeue_after"} 0',
      'controller_runtime_reconcile_errors_total{controller="widgets"} 0',
      'controller_runtime_terminal_reconcile_errors_total{controller="widgets"} 0',
      'workqueue_adds_total{controller="widgets",name="widgets"} 0',
      'workqueue_retries_total{controller="widgets",name="widgets"} 0',
      'workqueue_depth{controller="widgets",name="widgets"} 0',
    ]) {
      expect(text).toContain(line);
    }
  });

  it("retries a retryable error with growing backoff, records a Warning event and calls the error policy", async () => {
    const times: number[] = [];
    const h = harness(async () => {
      times.push(Date.now());
      if (times.length < 4)
        throw new RetryableError("ServiceUnavailable", "the service answered 503");
      return {};
    });
    h.api(widgets).items = [widget("a")];
    h.cache.start();
    await h.cache.waitForSync();
    const t0 = Date.now();
    h.running.start();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(times.map((t) => t - t0)).toEqual([0, 100, 300, 700]);
    await h.events.flush();
    expect(h.created).toHaveLength(1);
    expect(h.created[0]).toMatchObject({
      type: "Warning",
      reason: "ServiceUnavailable",
      note: "the service answered 503",
    });
    expect(h.policyCalls).toEqual(Array(3).fill("a: the service answered 503"));
    const text = await h.metrics.text();
    expect(text).toContain('controller_runtime_reconcile_errors_total{controller="widgets"} 3');
    expect(text).toContain(
      'controller_runtime_reconcile_total{controller="widgets",result="success"} 1',
    );
    expect(text).toContain('workqueue_retries_total{controller="widgets",name="widgets"} 3');
    // Four adds (the first and three retries), each handed to a worker once.
    for (const line of [
      'workqueue_adds_total{controller="widgets",name="widgets"} 4',
      'workqueue_queue_duration_seconds_count{controller="widgets",name="widgets"} 4',
      'workqueue_work_duration_seconds_count{controller="widgets",name="widgets"} 4',
      'workqueue_depth{controller="widgets",name="widgets"} 0',
    ]) {
      expect(text).toContain(line);
    }
    await h.running.stop(1_000);
    await h.cache.stop();
  });

  it("retries a retryable error that says when (requeueAfterMs) then, not on the growing backoff", async () => {
    const times: number[] = [];
    const h = harness(async () => {
      times.push(Date.now());
      if (times.length < 3) {
        throw new RetryableError("ConnectionThrottled", "the rate limit is saturated", {
          requeueAfterMs: 2_500,
        });
      }
      return {};
    });
    h.api(widgets).items = [widget("a")];
    h.cache.start();
    await h.cache.waitForSync();
    const t0 = Date.now();
    h.running.start();
    await vi.advanceTimersByTimeAsync(6_000);
    expect(times.map((t) => t - t0)).toEqual([0, 2_500, 5_000]);
    await h.running.stop(1_000);
    await h.cache.stop();
  });

  it("records a Normal event, not a Warning, for a retryable error that is an expected wait", async () => {
    let calls = 0;
    const h = harness(async () => {
      calls += 1;
      if (calls < 2) {
        throw new RetryableError("NasVolumeNotReady", "NasVolume data is not Ready yet", {
          waiting: true,
        });
      }
      return {};
    });
    h.api(widgets).items = [widget("a")];
    h.cache.start();
    await h.cache.waitForSync();
    h.running.start();
    await vi.advanceTimersByTimeAsync(1_000);
    await h.events.flush();
    expect(h.created).toHaveLength(1);
    expect(h.created[0]).toMatchObject({ type: "Normal", reason: "NasVolumeNotReady" });
    await h.running.stop(1_000);
    await h.cache.stop();
  });

  it("abandons a reconcile past its deadline: the worker takes the next key, the key is retried, and the abandoned run can send nothing more", async () => {
    const seen: string[] = [];
    let hangs = true;
    let release: () => void = () => undefined;
    let afterDeadline: unknown;
    const h = harness(
      async (k, ctx) => {
        seen.push(k.name);
        if (k.name === "slow" && hangs) {
          hangs = false;
          // ctx.kube's and ctx.events' views of this reconcile: what their requests
          // carry (a view whose signal is aborted sends nothing: kube.test.ts).
          const own = h.views.slice(-2);
          await new Promise<void>((r) => {
            release = r;
          });
          afterDeadline = own.map((v) => [v.flow, v.signal === ctx.signal, v.signal.aborted]);
        }
        return {};
      },
      { concurrency: 1, reconcileTimeoutMs: 1_000 },
    );
    h.api(widgets).items = [widget("slow"), widget("other")];
    h.cache.start();
    await h.cache.waitForSync();
    h.running.start();
    await vi.advanceTimersByTimeAsync(999);
    expect(seen).toEqual(["slow"]);
    await vi.advanceTimersByTimeAsync(1);
    await settle();
    expect(seen).toEqual(["slow", "other"]);
    release();
    await settle();
    expect(afterDeadline).toEqual([
      ["", true, true],
      ["", true, true],
    ]);
    expect(h.policyCalls[0]).toMatch(/^slow: the reconcile took longer than 1000 ms/);
    await vi.advanceTimersByTimeAsync(200);
    await settle();
    expect(seen).toEqual(["slow", "other", "slow"]);
    await h.running.stop(1_000);
    await h.cache.stop();
  });

  it("looks again later, quietly, at a routine look that reached the deadline, and fails it only after three in a row", async () => {
    let runs = 0;
    const h = harness(
      async () => {
        runs += 1;
        // The first look settles the object; every routine look after it hangs.
        if (runs === 1) return { requeueAfterMs: 1_000, priority: "low" };
        await new Promise<void>(() => undefined);
        return {};
      },
      { concurrency: 1, reconcileTimeoutMs: 1_000 },
    );
    h.api(widgets).items = [widget("settled", {}, readyStatus)];
    h.cache.start();
    await h.cache.waitForSync();
    h.running.start();
    await settle();
    // The routine look at 1 s, its deadline at 2 s, looked at again one deadline later.
    for (let i = 0; i < 3; i++) {
      await vi.advanceTimersByTimeAsync(2_000);
      await settle();
    }
    expect(runs).toBe(4);
    expect(h.policyCalls).toEqual([]);
    // The fourth in a row fails as any reconcile (error policy, Warning event).
    await vi.advanceTimersByTimeAsync(2_000);
    await settle();
    expect(runs).toBe(5);
    expect(h.policyCalls).toEqual([
      "settled: the reconcile took longer than 1000 ms (reconcileTimeoutMs) and was abandoned; it is retried with backoff",
    ]);
    await h.running.stop(1_000);
    await h.cache.stop();
  });

  it("retries a write conflict at once without a Warning event or an error-policy write", async () => {
    let calls = 0;
    const h = harness(async () => {
      calls += 1;
      if (calls === 1) throw new ConflictError("status update", new Error("409"));
      return {};
    });
    h.api(widgets).items = [widget("a")];
    h.cache.start();
    await h.cache.waitForSync();
    h.running.start();
    await vi.advanceTimersByTimeAsync(200);
    await h.events.flush();
    expect(calls).toBe(2);
    expect(h.created).toHaveLength(0);
    expect(h.policyCalls).toEqual([]);
    await h.running.stop(1_000);
    await h.cache.stop();
  });

  it("holds a key after a terminal error until the object itself changes, ignoring status-only updates", async () => {
    let count = 0;
    const h = harness(async () => {
      count++;
      throw new TerminalError("Forbidden", "the service refused the API key");
    });
    h.api(widgets).items = [widget("a")];
    h.cache.start();
    await h.cache.waitForSync();
    h.running.start();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(count).toBe(1);
    expect(h.running.heldKeys()).toEqual(["ns/a"]);
    h.api(widgets).emit("MODIFIED", widget("a", {}, { phase: "Failed" }));
    await vi.advanceTimersByTimeAsync(60_000);
    expect(count).toBe(1);
    h.api(widgets).emit("MODIFIED", widget("a", { generation: 2 }));
    await settle();
    expect(count).toBe(2);
    await h.running.stop(1_000);
    await h.cache.stop();
  });

  it("retries a key held by an external terminal error on the slow, bounded hold backoff until it succeeds", async () => {
    const at: number[] = [];
    const h = harness(
      async () => {
        at.push(Date.now());
        if (at.length <= 4) {
          throw new TerminalError("ApiKeyRefused", "the service refused the API key", {
            external: true,
          });
        }
        return {};
      },
      { holdBackoff: { baseMs: 1_000, maxMs: 3_000 } },
    );
    h.api(widgets).items = [widget("a")];
    h.cache.start();
    await h.cache.waitForSync();
    const start = Date.now();
    h.running.start();
    await vi.advanceTimersByTimeAsync(20_000);
    // 1 s, 2 s, then the 3 s bound; the fifth attempt succeeds and nothing follows.
    expect(at.map((t) => t - start)).toEqual([0, 1_000, 3_000, 6_000, 9_000]);
    expect(h.running.heldKeys()).toEqual([]);
    await h.running.stop(1_000);
    await h.cache.stop();
  });

  it("keeps a spec-caused terminal hold without retries, and lifts external holds at requeueAll(true)", async () => {
    let calls = 0;
    const h = harness(
      async (k) => {
        calls++;
        if (k.name === "a") throw new TerminalError("InvalidSpec", "refused");
        throw new TerminalError("ApiKeyRefused", "refused key", { external: true });
      },
      { holdBackoff: { baseMs: 60_000, maxMs: 60_000 } },
    );
    h.api(widgets).items = [widget("a"), widget("b")];
    h.cache.start();
    await h.cache.waitForSync();
    h.running.start();
    await settle();
    await vi.advanceTimersByTimeAsync(30_000);
    expect(calls).toBe(2);
    h.running.requeueAll(true);
    await settle();
    expect(calls).toBe(4);
    await h.running.stop(1_000);
    await h.cache.stop();
  });

  it("runs a spec-caused terminal hold once more when its error policy could not write (the API server down), so its condition is recorded", async () => {
    let calls = 0;
    const h = harness(
      async () => {
        calls++;
        throw new TerminalError("InvalidSpec", "refused");
      },
      {
        policyThrows: (n) =>
          n === 1 ? new Error("socket disconnected before TLS was established") : undefined,
      },
    );
    h.api(widgets).items = [widget("a")];
    h.cache.start();
    await h.cache.waitForSync();
    h.running.start();
    await settle();
    await vi.advanceTimersByTimeAsync(30_000);
    expect(h.policyCalls).toEqual(["a: refused", "a: refused"]);
    expect(calls).toBe(2);
    await h.running.stop(1_000);
    await h.cache.stop();
  });

  it("says a reconcile that failed while the API server does not answer once: its error policy's write that got no answer at debug, one refused as a warning", async () => {
    const lines: { level: number; msg: string }[] = [];
    const log = pino(
      { level: "debug" },
      { write: (l: string) => lines.push(JSON.parse(l) as (typeof lines)[number]) },
    );
    const unreachable = new KubeUnreachableError(
      Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:6443"), { code: "ECONNREFUSED" }),
    );
    const h = harness(
      async () => {
        throw unreachable;
      },
      {
        log,
        policyThrows: (n) =>
          n <= 2 ? unreachable : new KubeApiError("PATCH", "/w/a/status", 403, {}),
      },
    );
    h.api(widgets).items = [widget("a")];
    h.cache.start();
    await h.cache.waitForSync();
    h.running.start();
    // Tried at 0, 100 and 300 ms.
    await vi.advanceTimersByTimeAsync(350);
    const warned = lines.filter((l) => l.level >= 40).map((l) => l.msg);
    expect(h.policyCalls).toHaveLength(3);
    expect(warned).toEqual([
      ...Array(3).fill("reconcile failed; will retry"),
      "error policy failed; the retry records it",
    ]);
    expect(lines.filter((l) => l.msg.startsWith("error policy got no answer"))).toHaveLength(2);
    await h.running.stop(1_000);
    await h.cache.stop();
  });

  it("lifts a terminal hold when a watched object mapped to the key changes", async () => {
    let count = 0;
    const h = harness(async () => {
      count++;
      if (count === 1) throw new TerminalError("MissingGadget", "gadget g not found");
      return {};
    });
    h.api(widgets).items = [widget("a")];
    h.cache.start();
    await h.cache.waitForSync();
    h.running.start();
    await settle();
    expect(count).toBe(1);
    h.api(gadgets).emit("ADDED", {
      apiVersion: "test.aidc.io/v1",
      kind: "Gadget",
      metadata: { name: "g", namespace: "ns", resourceVersion: "500" },
      spec: { widget: "a" },
    });
    await settle();
    expect(count).toBe(2);
    expect(h.running.heldKeys()).toEqual([]);
    await h.running.stop(1_000);
    await h.cache.stop();
  });

  it("maps only the watched changes its predicate lets through (event types, condition reasons)", async () => {
    const gadget = (rv: string, reason?: string): KubeObject => ({
      apiVersion: "test.aidc.io/v1",
      kind: "Gadget",
      metadata: { name: "g", namespace: "ns", resourceVersion: rv },
      spec: { widget: "a" },
      ...(reason ? { status: { conditions: [{ type: "Ready", reason }] } } : {}),
    });
    for (const [when, want] of [
      [{ events: ["add", "delete"] }, ["ADDED", "DELETED"]],
      [{ reasons: new Set(["Broken"]) }, ["MODIFIED", "MODIFIED"]],
    ] as const) {
      const reconciled: number[] = [];
      const h = harness(
        async () => {
          reconciled.push(1);
          return {};
        },
        { gadgetsWhen: when },
      );
      h.api(widgets).items = [widget("a")];
      h.cache.start();
      await h.cache.waitForSync();
      h.running.start();
      await settle();
      const seen: string[] = [];
      const steps = [
        ["ADDED", gadget("500")],
        ["MODIFIED", gadget("501")],
        ["MODIFIED", gadget("502", "Broken")],
        ["MODIFIED", gadget("503")],
        ["DELETED", gadget("503")],
      ] as const;
      for (const [type, obj] of steps) {
        const before = reconciled.length;
        h.api(gadgets).emit(type, obj);
        await settle();
        if (reconciled.length > before) seen.push(type);
      }
      // The reason filter lets the change that sets "Broken" (new state) and the one that
      // clears it (old state) through.
      expect(seen).toEqual(want);
      await h.running.stop(1_000);
      await h.cache.stop();
    }
  });

  it("treats any error with retryable false as terminal (duck-typed service errors)", async () => {
    let count = 0;
    const h = harness(async () => {
      count++;
      throw Object.assign(new Error("403 from the service"), { retryable: false });
    });
    h.api(widgets).items = [widget("a")];
    h.cache.start();
    await h.cache.waitForSync();
    h.running.start();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(count).toBe(1);
    await h.running.stop(1_000);
    await h.cache.stop();
  });

  it("lets the event loop turn between reconciles that await nothing (a burst of routine polls)", async () => {
    vi.useRealTimers();
    let reconciled = 0;
    const h = harness(
      async () => {
        reconciled++;
        return {};
      },
      { concurrency: 4 },
    );
    h.api(widgets).items = Array.from({ length: 2_000 }, (_, i) => widget(`w${i}`));
    h.cache.start();
    await h.cache.waitForSync();
    // A timer due at once stands for I/O waiting (a watch event, an answer).
    const atFirstTurn = new Promise<number>((r) => setTimeout(() => r(reconciled), 0));
    h.running.start();
    // Without a turn between keys, all 2,000 ran before the timer: ~1 s of CPU blocking
    // every socket and timer of the process at 1 ms each.
    expect(await atFirstTurn).toBeLessThan(100);
    while (reconciled < 2_000) await new Promise((r) => setTimeout(r, 5));
    await h.running.stop(1_000);
    await h.cache.stop();
  });

  it("runs different keys in parallel but never the same key twice at once", async () => {
    const active = new Set<string>();
    let maxParallel = 0;
    let overlapSameKey = false;
    const h = harness(
      async (k) => {
        if (active.has(k.name)) overlapSameKey = true;
        active.add(k.name);
        maxParallel = Math.max(maxParallel, active.size);
        await new Promise((r) => setTimeout(r, 100));
        active.delete(k.name);
        return {};
      },
      { concurrency: 3 },
    );
    h.api(widgets).items = [widget("a"), widget("b")];
    h.cache.start();
    await h.cache.waitForSync();
    h.running.start();
    await settle();
    h.api(widgets).emit("MODIFIED", widget("a", { generation: 5 }));
    h.api(widgets).emit("MODIFIED", widget("a", { generation: 6 }));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(maxParallel).toBe(2);
    expect(overlapSameKey).toBe(false);
    await h.running.stop(1_000);
    await h.cache.stop();
  });

  it("on stop, lets an in-flight reconcile finish within the bound and aborts it after", async () => {
    let aborted = false;
    let finished = false;
    const h = harness(async () => {
      await new Promise((r) => setTimeout(r, 5_000));
      finished = true;
      return {};
    });
    h.api(widgets).items = [widget("a")];
    h.cache.start();
    await h.cache.waitForSync();
    h.running.start();
    await settle();
    const stopped = h.running.stop(10_000);
    await vi.advanceTimersByTimeAsync(5_000);
    await expect(stopped).resolves.toBe(true);
    expect(finished).toBe(true);

    const h2 = harness(async (_k, ctx) => {
      ctx.signal.addEventListener("abort", () => {
        aborted = true;
      });
      await new Promise((r) => setTimeout(r, 60_000));
      return {};
    });
    h2.api(widgets).items = [widget("b")];
    h2.cache.start();
    await h2.cache.waitForSync();
    h2.running.start();
    await settle();
    const bounded = h2.running.stop(1_000);
    await vi.advanceTimersByTimeAsync(1_000);
    await expect(bounded).resolves.toBe(false);
    expect(aborted).toBe(true);
    await h.cache.stop();
    await h2.cache.stop();
  });

  it("on stop, records no failure of a reconcile it aborted: no Event, no error policy, as it is not the object's (the next leader reconciles it)", async () => {
    const h = harness(async (_k, ctx) => {
      await new Promise((_, reject) =>
        ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)),
      );
      return {};
    });
    h.api(widgets).items = [widget("a")];
    h.cache.start();
    await h.cache.waitForSync();
    h.running.start();
    await settle();
    const bounded = h.running.stop(1_000);
    await vi.advanceTimersByTimeAsync(1_000);
    await expect(bounded).resolves.toBe(false);
    await settle();
    await h.events.flush();
    expect(h.policyCalls).toEqual([]);
    expect(h.created).toEqual([]);
    await h.cache.stop();
  });
});
