import { describe, expect, it } from "vitest";
import {
  decideImages,
  formatLedger,
  type ImageLedger,
  type ImagesInput,
  parseLedger,
  saveRetryDelayMs,
} from "./images.js";

const now = new Date("2026-01-01T12:00:00.000Z");
const before = "2026-01-01T11:59:00.000Z";
const after = "2026-01-01T12:00:30.000Z";
/** 10 s before now: a third failure (40 s backoff) is due at 12:00:30. */
const recent = "2026-01-01T11:59:50.000Z";
const a = { imageName: "team/a", tag: "v1" };
const b = { imageName: "team/b", tag: "v1" };
const backoff = { baseMs: 10_000, maxMs: 60_000 };
const running = { status: "RUNNING", saveImageStatus: false, observedAt: now };

const input = (over: Partial<ImagesInput>): ImagesInput => ({
  images: [a, b],
  ledger: {},
  instance: running,
  now,
  backoff,
  ...over,
});

describe("decideImages", () => {
  const cases: {
    reason: string;
    input: ImagesInput;
    save?: typeof a;
    states: string[];
    condition?: string;
    message?: RegExp;
  }[] = [
    {
      reason: "nothing saved yet: the first image is saved, the second waits",
      input: input({}),
      save: a,
      states: ["Pending", "Pending"],
      condition: "Saving",
    },
    {
      reason: "the same image listed twice is saved once",
      input: input({ images: [a, { ...a }] }),
      save: a,
      states: ["Pending"],
    },
    {
      reason: "nothing is saved from an instance in ERROR",
      input: input({ instance: { ...running, status: "ERROR" } }),
      states: ["Pending", "Pending"],
      message: /the instance is ERROR/,
    },
    {
      reason: "nothing is saved while the service saves another image",
      input: input({ instance: { ...running, saveImageStatus: true } }),
      states: ["Pending", "Pending"],
      message: /saving another image/,
    },
    {
      reason: "a saved image with the instance idle is Saved and the next one is saved",
      input: input({ ledger: { "team/a:v1": { at: before, attempts: 1, imageId: "img-1" } } }),
      save: b,
      states: ["Saved", "Pending"],
    },
    {
      reason: "the last saved image is Saving while saveImageStatus is true",
      input: input({
        ledger: { "team/a:v1": { at: before, attempts: 1, imageId: "img-1" } },
        instance: { ...running, saveImageStatus: true },
      }),
      states: ["Saving", "Pending"],
    },
    {
      reason: "a save not yet observed by the list is Saving, and the next waits for it",
      input: input({ ledger: { "team/a:v1": { at: after, attempts: 1, imageId: "img-1" } } }),
      states: ["Saving", "Pending"],
      message: /not been observed yet/,
    },
    {
      reason: "a failed save waits for its backoff, and does not block the others",
      input: input({ ledger: { "team/a:v1": { at: recent, attempts: 3, failed: "409 busy" } } }),
      save: b,
      states: ["Failed", "Pending"],
      condition: "SaveRetrying",
      message: /attempt 3 failed: 409 busy; next attempt at 2026-01-01T12:00:30Z/,
    },
    {
      reason: "a failed save whose backoff passed is saved again",
      input: input({ ledger: { "team/a:v1": { at: before, attempts: 1, failed: "409 busy" } } }),
      save: a,
      states: ["Failed", "Pending"],
    },
    {
      reason: "an unanswered marker is an unknown outcome: never saved again automatically",
      input: input({ images: [a], ledger: { "team/a:v1": { at: before, attempts: 1 } } }),
      states: ["Failed"],
      condition: "SaveOutcomeUnknown",
      message: /SaveOutcomeUnknown: .*remove the entry from spec.images and add it back/,
    },
    {
      reason: "all saved is ImagesSaved=True",
      input: input({
        ledger: {
          "team/a:v1": { at: before, attempts: 1, imageId: "img-1" },
          "team/b:v1": { at: before, attempts: 1, imageId: "img-2" },
        },
      }),
      states: ["Saved", "Saved"],
      condition: "Saved",
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      const got = decideImages(c.input);
      expect(got.save).toEqual(c.save);
      expect(got.statuses.map((s) => s.state)).toEqual(c.states);
      if (c.condition) expect(got.condition?.reason).toBe(c.condition);
      if (c.message) expect(got.statuses.map((s) => s.message ?? "").join("\n")).toMatch(c.message);
    });
  }

  it("has no condition and saves nothing without images", () => {
    const got = decideImages(input({ images: [] }));
    expect(got).toEqual({ statuses: [], ledger: {} });
  });

  it("forgets unsaved entries removed from the spec but keeps saved ones", () => {
    const ledger: ImageLedger = {
      "old:1": { at: before, attempts: 1, failed: "x" },
      "gone:1": { at: before, attempts: 1 },
      "kept:1": { at: before, attempts: 1, imageId: "img-9" },
    };
    expect(Object.keys(decideImages(input({ images: [a], ledger })).ledger)).toEqual(["kept:1"]);
  });

  it("asks to be requeued when the next failed save is due", () => {
    const ledger: ImageLedger = { "team/a:v1": { at: recent, attempts: 3, failed: "x" } };
    expect(decideImages(input({ images: [a], ledger })).retryAt?.toISOString()).toBe(
      "2026-01-01T12:00:30.000Z",
    );
  });

  it("does not ask for an immediate requeue when a due retry is blocked by the instance", () => {
    const ledger: ImageLedger = { "team/a:v1": { at: before, attempts: 1, failed: "x" } };
    const got = decideImages(
      input({ images: [a], ledger, instance: { ...running, status: "ERROR" } }),
    );
    expect(got.save).toBeUndefined();
    expect(got.retryAt).toBeUndefined();
    expect(got.statuses[0]?.message).toMatch(/attempt 1 failed: x; waiting: the instance is ERROR/);
  });
});

describe("saveRetryDelayMs", () => {
  const cases = [
    { reason: "the first retry waits the base delay", attempts: 1, want: 10_000 },
    { reason: "each failure doubles the delay", attempts: 3, want: 40_000 },
    { reason: "the delay is capped", attempts: 10, want: 60_000 },
  ];
  for (const c of cases)
    it(c.reason, () => expect(saveRetryDelayMs(c.attempts, backoff)).toBe(c.want));
});

describe("the ledger annotation", () => {
  it("reads back what it wrote, with sorted keys", () => {
    const ledger: ImageLedger = {
      "z:1": { at: before, attempts: 2, failed: "x" },
      "a:1": { at: before, attempts: 1, imageId: "img-1" },
    };
    const text = formatLedger(ledger);
    expect(text.indexOf('"a:1"')).toBeLessThan(text.indexOf('"z:1"'));
    expect(parseLedger(text)).toEqual(ledger);
  });

  const unreadable = [
    { reason: "text that is not JSON", raw: "{nope" },
    { reason: "a JSON array", raw: "[]" },
    { reason: "an entry without a time", raw: '{"a:1":{"imageId":"x"}}' },
  ];
  for (const c of unreadable) {
    it(`is unreadable (undefined, never empty) for ${c.reason}`, () => {
      expect(parseLedger(c.raw)).toBeUndefined();
    });
  }

  it("is empty when the annotation is absent", () => expect(parseLedger(undefined)).toEqual({}));
});
