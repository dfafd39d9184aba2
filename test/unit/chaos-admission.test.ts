import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../src/runtime/resource.js";
import {
  checkAdmission,
  type MarkerWrite,
  type PlannedAdmission,
  waitingOf,
} from "../chaos/admission.js";
import { nasCreateCall } from "../support/request-log.js";

const T0 = Date.parse("2026-01-01T00:00:10Z");

/** A NAS create call carrying `name` and `token`, arrived at `at` (ms). */
const create = (name: string, token: string, at: number) =>
  nasCreateCall(at, { name, description: `aidc token ${token}` });

/** A NasVolume `name` whose Synced reason is `synced`, Ready when `ready`. */
function nas(name: string, synced: string, ready = false): KubeObject {
  return {
    kind: "NasVolume",
    metadata: { name },
    status: {
      conditions: [
        {
          type: "Ready",
          status: ready ? "True" : "False",
          reason: ready ? "Available" : "Creating",
        },
        { type: "Synced", status: ready ? "True" : "False", reason: synced },
      ],
    },
  };
}

const plan = (...names: string[]) =>
  new Map<string, PlannedAdmission>(
    names.map((name) => [`NasVolume/${name}`, { kind: "NasVolume", name, mode: "strip-some" }]),
  );

describe("the chaos run's webhook that strips some writes", () => {
  it("allows a create after a kept write of its marker, Ready or waiting at WriteNotKept", () => {
    const markers = new Map<string, MarkerWrite[]>([
      [
        "NasVolume/s-0",
        [
          { token: "t-0", at: T0 - 100, kept: false },
          { token: "t-1", at: T0 - 50, kept: true },
        ],
      ],
      ["NasVolume/s-1", [{ token: "t-2", at: T0 - 10, kept: true }]],
    ]);
    const objects = [nas("s-0", "ReconcileSuccess", true), nas("s-1", "WriteNotKept")];
    const found = checkAdmission(
      plan("s-0", "s-1", "s-2"),
      [create("s-0", "t-1", T0), create("s-1", "t-2", T0)],
      objects,
      new Set(["NasVolume/s-2"]),
      markers,
    );
    expect(found.violations).toEqual([]);
    expect(found.stripSome).toEqual({ ready: 1, waiting: ["NasVolume/s-1"] });
    expect(found.markerWrites).toEqual({ kept: 2, stripped: 1 });
    expect(waitingOf(plan("s-0", "s-1"), objects, new Set())).toEqual(new Set(["NasVolume/s-1"]));
    // Ready beside a WriteNotKept is bound, not waiting, unless its object was deleted.
    const bound = [nas("s-0", "WriteNotKept", true)];
    expect(waitingOf(plan("s-0"), bound, new Set())).toEqual(new Set());
    expect(waitingOf(plan("s-0"), bound, new Set(["NasVolume/s-0"]))).toEqual(
      new Set(["NasVolume/s-0"]),
    );
  });

  it("finds a create before any kept marker, one with a token never kept, and another end state", () => {
    const markers = new Map<string, MarkerWrite[]>([
      [
        "NasVolume/s-0",
        [
          { token: "t-0", at: T0 - 100, kept: false },
          { token: "t-1", at: T0 + 50, kept: true },
        ],
      ],
      [
        "NasVolume/s-1",
        [
          { token: "t-2", at: T0 - 100, kept: false },
          { token: "t-3", at: T0 - 50, kept: true },
        ],
      ],
    ]);
    const found = checkAdmission(
      plan("s-0", "s-1", "s-2"),
      [create("s-0", "t-1", T0), create("s-1", "t-2", T0), create("s-2", "t-9", T0)],
      [
        nas("s-0", "ReconcileSuccess", true),
        nas("s-1", "ReconcileSuccess", true),
        nas("s-2", "CreateOutcomeUnknown"),
      ],
      new Set(),
      markers,
    );
    expect(found.violations).toEqual([
      "NasVolume/s-0: subscribeNas at 2026-01-01T00:00:10.000Z after a stripped write of its marker",
      "NasVolume/s-1: subscribeNas carries the token of a marker never kept (t-2)",
      "NasVolume/s-2: subscribeNas at 2026-01-01T00:00:10.000Z after no write of its marker",
      "NasVolume/s-2 (strip-some) is neither Ready nor waiting at WriteNotKept (Synced CreateOutcomeUnknown)",
    ]);
  });
});
