/**
 * An Event's write the API server did not answer is tried again (event-retries.ts): a
 * bounded number of times, a bounded number of them waiting; what is dropped is counted.
 */
import { Counter, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import type { EventRetryOptions } from "./event-retries.js";
import { EventRecorder, type EventRecorderOptions } from "./events.js";
import type { KubeClient } from "./kube.js";
import { KubeApiError } from "./kube-errors.js";
import { KubeUnreachableError } from "./kube-unreachable.js";
import type { KubeObject } from "./resource.js";

const unreachable = () =>
  new KubeUnreachableError(
    Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:6443"), { code: "ECONNREFUSED" }),
  );

/** A KubeClient whose writes get no answer while `state.down`, and a 403 for `refused`. */
function outageKube() {
  const state = { down: true, tries: 0 };
  const created: { metadata: { name: string }; reason: string }[] = [];
  const patched: { name: string; count: number }[] = [];
  const answer = () => {
    state.tries++;
    if (state.down) throw unreachable();
  };
  const kube = {
    create: async (_res: unknown, body: (typeof created)[number]) => {
      answer();
      if (body.reason === "Refused")
        throw new KubeApiError("POST", "/events", 403, { reason: "Forbidden" });
      created.push(body);
      return body;
    },
    patch: async (_res: unknown, key: { name: string }, body: { series: { count: number } }) => {
      answer();
      patched.push({ name: key.name, count: body.series.count });
      return {};
    },
  } as unknown as KubeClient;
  return { kube, state, created, patched };
}

const object = (name: string): KubeObject => ({
  apiVersion: "aidc.io/v1alpha1",
  kind: "NasVolume",
  metadata: { name, namespace: "ns", uid: `uid-${name}` },
});

/**
 * A recorder on an {@link outageKube} (down at first) that tries again as `retry` says,
 * with `more` options; `count` reads its dropped writes of a reason.
 */
function recorderInOutage(retry: EventRetryOptions, more: Partial<EventRecorderOptions> = {}) {
  const dropped = new Counter({
    name: "dropped",
    help: "h",
    labelNames: ["reason"],
    registers: [new Registry()],
  });
  const count = async (reason: string) =>
    (await dropped.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0;
  const outage = outageKube();
  const options = { controller: "t", instance: "t", retry, dropped, ...more };
  return { ...outage, count, recorder: new EventRecorder(outage.kube, options) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("EventRecorder's retries of writes the API server did not answer", () => {
  it("writes an Event recorded during an outage once it is over, its repeats as its series' count", async () => {
    const { state, created, patched, recorder, count } = recorderInOutage(
      { tries: 20, delayMs: 20 },
      { seriesUpdateMs: 0 },
    );
    recorder.warning(object("a"), "Failed", "boom");
    await sleep(60);
    recorder.warning(object("a"), "Failed", "boom");
    recorder.warning(object("a"), "Failed", "boom");
    await sleep(60);
    expect(created).toHaveLength(0);
    state.down = false;
    await sleep(100);
    await recorder.flush();
    expect(created.map((e) => e.reason)).toEqual(["Failed"]);
    expect(patched).toEqual([{ name: created[0]?.metadata.name, count: 3 }]);
    expect(await count("unanswered")).toBe(0);
  });

  it("writes the newest series count once the outage is over, counts that waited joining it", async () => {
    const { state, created, patched, recorder, count } = recorderInOutage(
      { tries: 10, delayMs: 30 },
      { seriesUpdateMs: 0 },
    );
    state.down = false;
    recorder.warning(object("a"), "Failed", "boom");
    await recorder.flush();
    state.down = true;
    for (let i = 0; i < 5; i++) {
      recorder.warning(object("a"), "Failed", "boom");
      await sleep(15);
    }
    state.down = false;
    await sleep(100);
    await recorder.flush();
    expect(created).toHaveLength(1);
    expect(patched.at(-1)).toEqual({ name: created[0]?.metadata.name, count: 6 });
    expect(await count("unanswered")).toBe(0);
    // Down for good: the series count waiting is dropped once, however many joined it.
    state.down = true;
    for (let i = 0; i < 3; i++) {
      recorder.warning(object("a"), "Failed", "boom");
      await sleep(15);
    }
    await sleep(300);
    await recorder.flush();
    expect(await count("unanswered")).toBe(1);
  });

  it("drops an Event after its tries, counted; a refused one is not tried again", async () => {
    const { state, created, recorder, count } = recorderInOutage({ tries: 3, delayMs: 10 });
    recorder.warning(object("a"), "Failed", "boom");
    for (let i = 0; i < 100 && (await count("unanswered")) === 0; i++) await sleep(20);
    expect(await count("unanswered")).toBe(1);
    expect(state.tries).toBe(3);
    state.down = false;
    state.tries = 0;
    recorder.warning(object("b"), "Refused", "no");
    await recorder.flush();
    expect(state.tries).toBe(1);
    expect(await count("refused")).toBe(1);
    expect(created).toHaveLength(0);
  });

  it("keeps at most maxWaiting writes waiting, dropping the oldest", async () => {
    const { state, created, recorder, count } = recorderInOutage({
      tries: 100,
      delayMs: 20,
      maxWaiting: 2,
    });
    for (const name of ["a", "b", "c"]) recorder.warning(object(name), "Failed", "boom");
    await sleep(50);
    expect(await count("unanswered")).toBe(1);
    state.down = false;
    await sleep(100);
    await recorder.flush();
    expect(created.map((e) => e.metadata.name.split(".")[0]).sort()).toEqual(["b", "c"]);
  });

  it("tries the waiting writes once more at flush, without waiting for their delay", async () => {
    const { state, created, recorder, count } = recorderInOutage({ tries: 12, delayMs: 60_000 });
    recorder.warning(object("a"), "Failed", "boom");
    recorder.warning(object("b"), "Failed", "boom");
    await sleep(20);
    state.down = false;
    const started = Date.now();
    await recorder.flush();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(created).toHaveLength(2);
    // Still down at a flush: dropped at once, counted.
    state.down = true;
    recorder.warning(object("c"), "Failed", "boom");
    await sleep(20);
    await recorder.flush();
    expect(await count("unanswered")).toBe(1);
  });

  it("tries a reconcile's Event again through the recorder's own client, the reconcile being over", async () => {
    const { kube, state, created } = outageKube();
    const view = {
      create: async () => {
        throw unreachable();
      },
    };
    (kube as unknown as { forReconcile: () => unknown }).forReconcile = () => view;
    const recorder = new EventRecorder(kube, {
      controller: "t",
      instance: "t",
      retry: { tries: 5, delayMs: 10 },
    });
    const signal = new AbortController().signal;
    recorder.forReconcile({ flow: "f", signal }).warning(object("a"), "Failed", "boom");
    state.down = false;
    await sleep(100);
    await recorder.flush();
    expect(created).toHaveLength(1);
  });
});
