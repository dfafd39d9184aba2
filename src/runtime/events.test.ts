import { describe, expect, it } from "vitest";
import type { Clock } from "./clock.js";
import { EventRecorder } from "./events.js";
import type { KubeClient } from "./kube.js";
import type { KubeObject } from "./resource.js";

/** A KubeClient that only records the Events created. */
function recordingKube() {
  const created: { regarding: { name: string }; reason: string }[] = [];
  const kube = {
    create: async (_res: unknown, body: (typeof created)[number]) => {
      created.push(body);
      return body;
    },
    patch: async () => ({}),
  } as unknown as KubeClient;
  return { kube, created };
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
