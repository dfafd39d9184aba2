import { Writable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { FakeListerWatcher } from "../../test/support/fake-listwatch.js";
import { LAST_APPLIED_ANNOTATION, ObjectStore } from "./cache.js";
import { Informer } from "./informer.js";
import type { StoreEvent } from "./informer-store.js";
import { WatchDecodeError, WatchHeldError } from "./kube-errors.js";
import { createLogger } from "./logging.js";
import type { KubeObject, ResourceDescriptor } from "./resource.js";

const widgets: ResourceDescriptor = {
  group: "test.aidc.io",
  version: "v1",
  plural: "widgets",
  kind: "Widget",
  namespaced: true,
};

const obj = (name: string, rv: string, namespace = "ns"): KubeObject => ({
  apiVersion: "test.aidc.io/v1",
  kind: "Widget",
  metadata: { name, namespace, resourceVersion: rv },
});

function start(api: FakeListerWatcher, options = {}) {
  const events: string[] = [];
  const informer = new Informer(widgets, new ObjectStore(), () => api, {
    watchdogMs: 60_000,
    ...options,
  });
  informer.on((e: StoreEvent) => events.push(`${e.type} ${e.object.metadata?.name}`));
  informer.start();
  return { informer, events };
}

describe("Informer", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("lists, then watches from the list's resourceVersion and applies events to the cache", async () => {
    const api = new FakeListerWatcher();
    api.items = [obj("a", "5")];
    const { informer, events } = start(api);
    await informer.waitForSync();
    await vi.advanceTimersByTimeAsync(0);
    expect(api.watches).toEqual(["10"]);
    expect(informer.isWatching()).toBe(true);
    api.stream?.onEvent("ADDED", obj("b", "11"));
    api.stream?.onEvent("MODIFIED", obj("a", "12"));
    api.stream?.onEvent("DELETED", obj("b", "13"));
    expect(events).toEqual(["add a", "add b", "update a", "delete b"]);
    expect(informer.store.keys()).toEqual(["ns/a"]);
    await informer.stop();
  });

  it("resumes a cleanly closed watch at once from the last resourceVersion seen", async () => {
    const api = new FakeListerWatcher();
    const { informer } = start(api);
    await vi.advanceTimersByTimeAsync(0);
    api.stream?.onEvent("ADDED", obj("a", "20"));
    api.stream?.onEvent("BOOKMARK", { metadata: { resourceVersion: "25" } });
    api.stream?.onDone(null);
    await vi.advanceTimersByTimeAsync(0);
    expect(api.watches).toEqual(["10", "25"]);
    expect(api.lists).toBe(1);
    await informer.stop();
  });

  it("lists again, after a short pause, when a watch sent a line that is not an event", async () => {
    const api = new FakeListerWatcher();
    api.items = [obj("a", "5")];
    const { informer, events } = start(api, { initialBackoffMs: 500 });
    await vi.advanceTimersByTimeAsync(0);
    expect(api.lists).toBe(1);
    // Whatever the unreadable line carried is lost: only a list is sure.
    api.items = [obj("a", "5"), obj("b", "14")];
    api.resourceVersion = "15";
    api.stream?.onDone(new WatchDecodeError("/apis/test.aidc.io/v1/widgets", "{not json"));
    await vi.advanceTimersByTimeAsync(0);
    expect(api.lists).toBe(1);
    await vi.advanceTimersByTimeAsync(500);
    expect(api.lists).toBe(2);
    expect(api.watches).toEqual(["10", "15"]);
    expect(events).toEqual(["add a", "add b"]);
    await informer.stop();
  });

  it("restarts a failed watch with a growing backoff and never gives up", async () => {
    const api = new FakeListerWatcher();
    const { informer } = start(api, { initialBackoffMs: 500, maxBackoffMs: 2_000 });
    await vi.advanceTimersByTimeAsync(0);
    api.watchStartError = new Error("connection refused");
    api.stream?.onDone(new Error("socket hang up"));
    await vi.advanceTimersByTimeAsync(0);
    expect(informer.isWatching()).toBe(false);
    // failures at t=0 (500 ms), t=500 (1000 ms), t=1500 (2000 ms), t=3500 (2000 ms cap)
    await vi.advanceTimersByTimeAsync(499);
    expect(api.watches).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(api.watches).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(api.watches).toHaveLength(3);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(api.watches).toHaveLength(4);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(api.watches).toHaveLength(5);
    api.watchStartError = undefined;
    await vi.advanceTimersByTimeAsync(2_000);
    expect(informer.isWatching()).toBe(true);
    expect(api.lists).toBe(1);
    await informer.stop();
  });

  it("leaves its failures to the cache's report: each logged at debug and told, its error kept until a watch is answered again, which is told too", async () => {
    const levels: string[] = [];
    const destination = new Writable({
      write(chunk, _enc, done) {
        levels.push(JSON.parse(String(chunk)).level);
        done();
      },
    });
    const api = new FakeListerWatcher();
    const log = createLogger({ destination, level: "debug" });
    const onWatchChange = vi.fn();
    const options = { initialBackoffMs: 500, maxBackoffMs: 2_000, log, onWatchChange };
    const { informer } = start(api, options);
    await vi.advanceTimersByTimeAsync(0);
    const refused = new Error("connect ECONNREFUSED 127.0.0.1:3128");
    api.watchStartError = refused;
    api.stream?.onDone(refused);
    // Failures at 0, 500, 1500 and 3500 ms.
    await vi.advanceTimersByTimeAsync(3_500);
    expect(onWatchChange).toHaveBeenCalledTimes(4);
    expect(levels).toEqual(Array(4).fill("debug"));
    expect(informer.lastError()).toBe(refused);
    api.watchStartError = undefined;
    await vi.advanceTimersByTimeAsync(2_000);
    expect(informer.isWatching()).toBe(true);
    expect(informer.lastError()).toBeUndefined();
    // Told once more: its watch is answered again.
    expect(onWatchChange).toHaveBeenCalledTimes(5);
    await informer.stop();
  });

  it("relists on a 410 Gone event and reports objects deleted meanwhile", async () => {
    const api = new FakeListerWatcher();
    api.items = [obj("a", "5"), obj("b", "6")];
    const { informer, events } = start(api);
    await vi.advanceTimersByTimeAsync(0);
    api.items = [obj("a", "30"), obj("c", "31")];
    api.resourceVersion = "31";
    api.stream?.onEvent("ERROR", { code: 410, message: "too old resource version" } as KubeObject);
    await vi.advanceTimersByTimeAsync(0);
    expect(api.lists).toBe(2);
    expect(api.watches).toEqual(["10", "31"]);
    expect(events.slice(2).sort()).toEqual(["add c", "delete b", "update a"]);
    await informer.stop();
  });

  it("relists when the watch request itself answers 410", async () => {
    const api = new FakeListerWatcher();
    const { informer } = start(api);
    await vi.advanceTimersByTimeAsync(0);
    api.stream?.onDone(Object.assign(new Error("Gone"), { statusCode: 410 }));
    await vi.advanceTimersByTimeAsync(0);
    expect(api.lists).toBe(2);
    await informer.stop();
  });

  it("ends a watch that stays silent longer than the watchdog period and lists again once a watch is answered, warning only when the list shows changes it never brought", async () => {
    const lines: { level: string; msg: string; changes?: number }[] = [];
    const destination = new Writable({
      write(chunk, _enc, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    const log = createLogger({ destination, level: "info" });
    const api = new FakeListerWatcher();
    api.items = [obj("a", "5")];
    const { informer, events } = start(api, { watchdogMs: 10_000, log });
    await vi.advanceTimersByTimeAsync(0);
    const first = api.stream;
    await vi.advanceTimersByTimeAsync(9_000);
    first?.onEvent("BOOKMARK", { metadata: { resourceVersion: "15" } });
    await vi.advanceTimersByTimeAsync(9_999);
    expect(api.watches).toEqual(["10"]);
    // Quiet (a server without bookmarks): the watch after it, answered, shows the
    // connection lives; the list then shows nothing new: nothing to say.
    await vi.advanceTimersByTimeAsync(1);
    expect(first?.aborted).toBe(true);
    expect(api.lists).toBe(2);
    expect(api.watches).toEqual(["10", "15", "10"]);
    expect(lines.filter((l) => l.level !== "info")).toEqual([]);
    // Held by a front: a change the watch never brought shows in the list.
    api.items = [obj("a", "16"), obj("b", "17")];
    api.resourceVersion = "17";
    await vi.advanceTimersByTimeAsync(10_000);
    expect(api.watches).toEqual(["10", "15", "10", "10", "17"]);
    expect(events).toEqual(["add a", "update a", "add b"]);
    expect(lines.filter((l) => l.level !== "info")).toMatchObject([
      {
        level: "warn",
        changes: 2,
        msg: "the watch sent nothing for 10 s, not even a bookmark, while objects changed: a proxy in front of the API server may be holding streamed answers (nginx: proxy_buffering off)",
      },
    ]);
    await informer.stop();
  });

  it("lists again at once, warning, after each watch a front let through only at its cut: late, not failed", async () => {
    const warnings: string[] = [];
    const destination = new Writable({
      write(chunk, _enc, done) {
        const line = JSON.parse(String(chunk));
        if (line.level === "warn") warnings.push(line.msg);
        done();
      },
    });
    const log = createLogger({ destination, level: "info" });
    const api = new FakeListerWatcher();
    const onWatchChange = vi.fn();
    const { informer } = start(api, { initialBackoffMs: 500, log, onWatchChange });
    await vi.advanceTimersByTimeAsync(0);
    for (let cut = 1; cut <= 5; cut++) {
      // nginx with proxy_buffering over HTTP/1.1: a minute held, then its events and the cut.
      api.stream?.onDone(new WatchHeldError("/apis/x", 60_000, new Error("other side closed")));
      await vi.advanceTimersByTimeAsync(0);
      expect(api.lists).toBe(1 + cut);
      expect(api.watches).toHaveLength(1 + cut);
    }
    expect(warnings).toEqual(
      Array(5).fill(
        "watch of /apis/x was held back 60 s by a front and let through only when it was cut: changes reach the operator that late (nginx: proxy_buffering off)",
      ),
    );
    // Not a failure of the watches: the cache's report says nothing of it.
    expect(informer.lastError()).toBeUndefined();
    expect(onWatchChange).not.toHaveBeenCalled();
    await informer.stop();
  });

  it("retries a failing list until it succeeds, and only then counts as synced", async () => {
    const api = new FakeListerWatcher();
    api.listError = new Error("503");
    const { informer } = start(api, { initialBackoffMs: 100 });
    await vi.advanceTimersByTimeAsync(0);
    expect(informer.hasSynced()).toBe(false);
    await vi.advanceTimersByTimeAsync(100);
    expect(api.lists).toBe(2);
    api.listError = undefined;
    await vi.advanceTimersByTimeAsync(200);
    expect(informer.hasSynced()).toBe(true);
    await informer.stop();
  });

  it("stops at once while a list goes unanswered (an API server behind a partition), not when the list ends", async () => {
    const api = new FakeListerWatcher();
    api.list = () => new Promise(() => {});
    const { informer } = start(api);
    await vi.advanceTimersByTimeAsync(0);
    let stopped = false;
    const stopping = informer.stop().then(() => {
      stopped = true;
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(true);
    await stopping;
    expect(informer.hasSynced()).toBe(false);
  });

  it("watches each configured namespace separately and syncs when all have listed", async () => {
    const apis = new Map<string, FakeListerWatcher>();
    const informer = new Informer(
      widgets,
      new ObjectStore(),
      (ns) => {
        const api = new FakeListerWatcher();
        api.items = [obj(`in-${ns}`, "1", ns)];
        apis.set(ns ?? "*", api);
        return api;
      },
      { namespaces: ["one", "two"] },
    );
    informer.start();
    await informer.waitForSync();
    expect([...apis.keys()]).toEqual(["one", "two"]);
    expect(informer.store.keys().sort()).toEqual(["one/in-one", "two/in-two"]);
    expect(informer.store.list("two")).toHaveLength(1);
    await informer.stop();
  });

  it("indexes objects and keeps the index current on updates and deletes", async () => {
    const api = new FakeListerWatcher();
    const ref = (name: string, rv: string, target: string): KubeObject => ({
      ...obj(name, rv),
      spec: { ref: target },
    });
    api.items = [ref("a", "1", "x"), ref("b", "2", "x")];
    const { informer } = start(api);
    informer.store.addIndex("ref", (o) => [String((o.spec as { ref: string }).ref)]);
    await informer.waitForSync();
    await vi.advanceTimersByTimeAsync(0);
    expect(informer.store.byIndex("ref", "x").map((o) => o.metadata?.name)).toEqual(["a", "b"]);
    api.stream?.onEvent("MODIFIED", ref("a", "3", "y"));
    api.stream?.onEvent("DELETED", ref("b", "4", "x"));
    expect(informer.store.byIndex("ref", "x")).toEqual([]);
    expect(informer.store.byIndex("ref", "y").map((o) => o.metadata?.name)).toEqual(["a"]);
    await informer.stop();
  });

  it("keeps objects without metadata.managedFields and kubectl's last-applied annotation, from the list and from the watch", async () => {
    const api = new FakeListerWatcher();
    const managed = (name: string, rv: string): KubeObject => ({
      ...obj(name, rv),
      metadata: {
        name,
        namespace: "ns",
        resourceVersion: rv,
        labels: { app: "x" },
        annotations: {
          [LAST_APPLIED_ANNOTATION]: JSON.stringify({ spec: { size: 1 } }),
          "aidc.io/external-id": "nas-1",
        },
        managedFields: [{ manager: "kubectl", operation: "Apply" }],
      },
      status: { phase: "Ready", conditions: [{ type: "Ready", status: "True" }] },
    });
    api.items = [managed("a", "1")];
    const { informer } = start(api);
    await informer.waitForSync();
    await vi.advanceTimersByTimeAsync(0);
    api.stream?.onEvent("ADDED", managed("b", "11"));
    for (const key of ["ns/a", "ns/b"]) {
      const cached = informer.store.get(key);
      expect(cached?.metadata).not.toHaveProperty("managedFields");
      expect(cached?.metadata?.labels).toEqual({ app: "x" });
      // The other annotations, the resourceVersion and the status stay as they were.
      expect(cached?.metadata?.annotations).toEqual({ "aidc.io/external-id": "nas-1" });
      expect(cached?.metadata?.resourceVersion).toBe(key === "ns/a" ? "1" : "11");
      expect(cached?.status).toEqual({
        phase: "Ready",
        conditions: [{ type: "Ready", status: "True" }],
      });
    }
    await informer.stop();
  });

  it("hands out frozen objects so a reconciler cannot corrupt the cache", async () => {
    const api = new FakeListerWatcher();
    api.items = [obj("a", "1")];
    const { informer } = start(api);
    await informer.waitForSync();
    const cached = informer.store.get("ns/a");
    expect(() => {
      (cached?.metadata as { name: string }).name = "changed";
    }).toThrow(TypeError);
    await informer.stop();
  });
});
