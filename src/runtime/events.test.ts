import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { EventRecorder, MAX_SERIES } from "./events.js";
import type { KubeClient } from "./kube.js";
import { KubeApiError } from "./kube-errors.js";
import { KubeUnreachableError } from "./kube-unreachable.js";
import type { Clock, KubeObject } from "./resource.js";

/** A KubeClient that only records the Events created. */
function recordingKube() {
  const created: { regarding: { name: string }; reason: string }[] = [];
  const patched: { name: string; count: number }[] = [];
  const kube = {
    create: async (_res: unknown, body: (typeof created)[number]) => {
      created.push(body);
      return body;
    },
    patch: async (_res: unknown, key: { name: string }, body: { series: { count: number } }) => {
      patched.push({ name: key.name, count: body.series.count });
      return {};
    },
  } as unknown as KubeClient;
  return { kube, created, patched };
}

const object = (name: string): KubeObject => ({
  apiVersion: "aidc.io/v1alpha1",
  kind: "NasVolume",
  metadata: { name, namespace: "ns", uid: `uid-${name}` },
});

describe("EventRecorder's spam filter", () => {
  it("records a burst of new Events per object, then one per refill period", async () => {
    let now = Date.parse("2026-01-01T00:00:00Z");
    const clock: Clock = { now: () => new Date(now) };
    const { kube, created } = recordingKube();
    const recorder = new EventRecorder(kube, {
      controller: "aidc.io/test",
      instance: "test",
      clock,
      spamBurst: 3,
      spamRefillMs: 60_000,
    });
    const noisy = object("noisy");
    for (let i = 0; i < 5; i++) recorder.warning(noisy, `Failure${i}`, `failure ${i}`);
    // Another object has a budget of its own.
    recorder.normal(object("quiet"), "Created", "created");
    await recorder.flush();
    expect(created.map((e) => e.reason)).toEqual(["Failure0", "Failure1", "Failure2", "Created"]);

    // A repeat of a recorded Event is counted into its series, not refused.
    recorder.warning(noisy, "Failure0", "failure 0");
    now += 59_000;
    recorder.warning(noisy, "Late", "not yet");
    now += 1_000;
    recorder.warning(noisy, "Refilled", "one token back after a minute");
    recorder.warning(noisy, "TooSoon", "none left");
    await recorder.flush();
    expect(created.map((e) => e.reason).slice(4)).toEqual(["Refilled"]);
  });
});

describe("EventRecorder's series", () => {
  it("remembers at most MAX_SERIES of them, forgetting the least recently observed first", async () => {
    let now = Date.parse("2026-01-01T00:00:00Z");
    const clock: Clock = { now: () => new Date(now) };
    const { kube, created, patched } = recordingKube();
    const recorder = new EventRecorder(kube, {
      controller: "aidc.io/test",
      instance: "test",
      clock,
      seriesUpdateMs: 0,
    });
    recorder.normal(object("first"), "Created", "created");
    recorder.normal(object("kept"), "Created", "created");
    for (let i = 0; i < MAX_SERIES - 2; i++) {
      now += 1;
      recorder.normal(object(`o${i}`), "Created", "created");
    }
    // A repeat moves "kept" to the most recent end; then one series too many.
    recorder.normal(object("kept"), "Created", "created");
    recorder.normal(object("one-more"), "Created", "created");
    await recorder.flush();
    expect(created).toHaveLength(MAX_SERIES + 1);
    expect(patched).toEqual([{ name: expect.stringMatching(/^kept\./), count: 2 }]);
    // "first" was forgotten: its repeat is a new Event; "kept" is still a series.
    recorder.normal(object("first"), "Created", "created");
    recorder.normal(object("kept"), "Created", "created");
    await recorder.flush();
    expect(created).toHaveLength(MAX_SERIES + 2);
    expect(created.at(-1)?.regarding.name).toBe("first");
    expect(patched.at(-1)).toEqual({ name: expect.stringMatching(/^kept\./), count: 3 });
  });

  it("forgets a series after the aggregation window: a late repeat is a new Event", async () => {
    let now = Date.parse("2026-01-01T00:00:00Z");
    const clock: Clock = { now: () => new Date(now) };
    const { kube, created, patched } = recordingKube();
    const recorder = new EventRecorder(kube, {
      controller: "aidc.io/test",
      instance: "test",
      clock,
      aggregationWindowMs: 60_000,
      seriesUpdateMs: 0,
    });
    recorder.warning(object("a"), "Failed", "boom");
    now += 30_000;
    recorder.warning(object("a"), "Failed", "boom");
    now += 61_000;
    recorder.warning(object("a"), "Failed", "boom");
    await recorder.flush();
    expect(created).toHaveLength(2);
    expect(patched).toHaveLength(1);
  });
});

describe("EventRecorder.forReconcile", () => {
  it("writes a reconcile's Events through that reconcile's client view, into the recorder's own series and names", async () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    const clock: Clock = { now: () => new Date(now) };
    const { kube, created, patched } = recordingKube();
    const flows: string[] = [];
    const base = kube as unknown as Record<string, unknown>;
    const viewOf = (flow: string) => ({
      ...base,
      create: (res: unknown, body: never) => {
        flows.push(flow);
        return (base.create as (r: unknown, b: never) => Promise<unknown>)(res, body);
      },
    });
    base.forReconcile = (view: { flow: string }) => viewOf(view.flow);
    const recorder = new EventRecorder(kube, { controller: "aidc.io/test", instance: "t", clock });
    const signal = new AbortController().signal;
    const a = recorder.forReconcile({ flow: "team-a", signal });
    const b = recorder.forReconcile({ flow: "team-b", signal });
    a.normal(object("x"), "Created", "created");
    // Another Event of x in the same millisecond, through another view: a name of its own.
    b.warning(object("x"), "Failed", "failed");
    // A repeat through another view is the same series, written as a count.
    b.normal(object("x"), "Created", "created");
    await recorder.flush();
    expect(flows).toEqual(["team-a", "team-b"]);
    const names = created.map(
      (e) => (e as unknown as { metadata: { name: string } }).metadata.name,
    );
    expect(new Set(names).size).toBe(2);
    expect(patched).toEqual([{ name: names[0], count: 2 }]);
  });
});

describe("EventRecorder's failed writes", () => {
  it("drops an Event, or a series count, the API server did not answer at debug, and warns of one it refused", async () => {
    const unreachable = () =>
      new KubeUnreachableError(
        Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:6443"), { code: "ECONNREFUSED" }),
      );
    const refusals: Record<string, () => Error> = {
      Unreached: unreachable,
      Forbidden: () => new KubeApiError("POST", "/events", 403, { reason: "Forbidden" }),
      Invalid: () => new KubeApiError("POST", "/events", 422, { reason: "Invalid" }),
    };
    const kube = {
      create: async (_res: unknown, body: { reason: string }) => {
        const refused = refusals[body.reason];
        if (refused) throw refused();
        return body;
      },
      patch: async (_res: unknown, key: { name: string }) => {
        throw key.name.startsWith("unreached")
          ? unreachable()
          : new KubeApiError("PATCH", "/events", 403, { reason: "Forbidden" });
      },
    } as unknown as KubeClient;
    const lines: { level: number; msg: string; reason?: string; event?: string }[] = [];
    const log = pino(
      { level: "debug" },
      { write: (l: string) => lines.push(JSON.parse(l) as (typeof lines)[number]) },
    );
    const recorder = new EventRecorder(kube, { controller: "t", instance: "t", log });
    for (const reason of Object.keys(refusals)) recorder.warning(object("a"), reason, "failed");
    for (const name of ["unreached", "refused"]) {
      recorder.normal(object(name), "Created", "created");
      recorder.normal(object(name), "Created", "created");
    }
    await recorder.flush();
    const said = (l: (typeof lines)[number]) =>
      `${l.level >= 40 ? "warn" : "debug"}: ${l.msg} ${l.reason ?? l.event?.split(".")[0]}`;
    expect(lines.map(said).sort()).toEqual([
      "debug: could not record event: the API server did not answer Unreached",
      "debug: could not update event series: the API server did not answer unreached",
      "warn: could not record event Forbidden",
      "warn: could not record event Invalid",
      "warn: could not update event series refused",
    ]);
  });
});
