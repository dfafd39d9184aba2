import { describe, expect, it } from "vitest";
import { OwnWriteEchoFilter } from "./controller-keys.js";
import type { StoreEvent } from "./informer-store.js";
import type { KubeObject } from "./resource.js";

/**
 * The own-write echo filter, as a table: each case is a primary object's event, whether
 * the key is being reconciled when it arrives, and which resourceVersions are known as
 * this process's own writes when the event arrives and when the reconcile ends (a
 * write's answer may come after its echo).
 */

const KEY = "ml/vol";

function object(
  resourceVersion: string,
  generation: number,
  extra: { labels?: Record<string, string>; phase?: string; deleting?: boolean } = {},
): KubeObject {
  return {
    metadata: {
      namespace: "ml",
      name: "vol",
      resourceVersion,
      generation,
      ...(extra.labels ? { labels: extra.labels } : {}),
      ...(extra.deleting ? { deletionTimestamp: "2026-01-01T00:00:00Z" } : {}),
    },
    ...(extra.phase ? { status: { phase: extra.phase } } : {}),
  } as KubeObject;
}

const before = object("10", 1, { phase: "Creating" });

/** The update of `before` to version 11 with a label added (the operator's own write, say). */
const labelEcho = (): StoreEvent => ({
  type: "update",
  old: before,
  object: object("11", 1, { labels: { a: "b" } }),
});

interface Case {
  name: string;
  event: StoreEvent;
  /** True when a worker is reconciling the key as the event arrives. */
  processing: boolean;
  /** resourceVersions known as own writes when the event arrives. */
  ownAtEvent: string[];
  /** resourceVersions known as own writes when the reconcile ends (answers in). */
  ownAtEnd: string[];
  /** Expected: the event asks for no reconcile at all. */
  asksForNothing: boolean;
  /** Expected, when the key was being reconciled: its re-add may be cancelled. */
  cancelReadd?: boolean;
}

const cases: Case[] = [
  {
    name: "own write echo arriving after the write's answer",
    event: { type: "update", old: before, object: object("11", 1, { labels: { a: "b" } }) },
    processing: false,
    ownAtEvent: ["11"],
    ownAtEnd: ["11"],
    asksForNothing: true,
  },
  {
    name: "own write echo arriving after the answer, during the reconcile that wrote it",
    event: { type: "update", old: before, object: object("11", 1, { labels: { a: "b" } }) },
    processing: true,
    ownAtEvent: ["11"],
    ownAtEnd: ["11"],
    asksForNothing: true,
  },
  {
    name: "own write echo arriving before the write's answer",
    event: { type: "update", old: before, object: object("11", 1, { labels: { a: "b" } }) },
    processing: true,
    ownAtEvent: [],
    ownAtEnd: ["11"],
    asksForNothing: false,
    cancelReadd: true,
  },
  {
    name: "someone else's metadata change during a reconcile (no answer ever claims it)",
    event: { type: "update", old: before, object: object("11", 1, { labels: { a: "b" } }) },
    processing: true,
    ownAtEvent: [],
    ownAtEnd: ["12"],
    asksForNothing: false,
    cancelReadd: false,
  },
  {
    name: "someone else's metadata change while the key is idle",
    event: { type: "update", old: before, object: object("11", 1, { labels: { a: "b" } }) },
    processing: false,
    ownAtEvent: [],
    ownAtEnd: [],
    asksForNothing: false,
  },
  {
    name: "a user change with a new generation",
    event: { type: "update", old: before, object: object("11", 2) },
    processing: false,
    ownAtEvent: [],
    ownAtEnd: [],
    asksForNothing: false,
  },
  {
    name: "a new generation written through this client is no echo",
    event: { type: "update", old: before, object: object("11", 2) },
    processing: false,
    ownAtEvent: ["11"],
    ownAtEnd: ["11"],
    asksForNothing: false,
  },
  {
    name: "a new generation during a reconcile runs again, even once its answer is in",
    event: { type: "update", old: before, object: object("11", 2) },
    processing: true,
    ownAtEvent: [],
    ownAtEnd: ["11"],
    asksForNothing: false,
    cancelReadd: false,
  },
  {
    name: "a status-only change by someone else",
    event: { type: "update", old: before, object: object("11", 1, { phase: "Ready" }) },
    processing: false,
    ownAtEvent: [],
    ownAtEnd: [],
    asksForNothing: true,
  },
  {
    name: "a status-only change during a reconcile",
    event: { type: "update", old: before, object: object("11", 1, { phase: "Ready" }) },
    processing: true,
    ownAtEvent: [],
    ownAtEnd: [],
    asksForNothing: true,
  },
  {
    name: "a deletion starting (deletionTimestamp set, same generation) by someone else",
    event: { type: "update", old: before, object: object("11", 1, { deleting: true }) },
    processing: false,
    ownAtEvent: [],
    ownAtEnd: [],
    asksForNothing: false,
  },
  {
    name: "a delete, also of a state this process wrote",
    event: { type: "delete", object: object("11", 1) },
    processing: false,
    ownAtEvent: ["11"],
    ownAtEnd: ["11"],
    asksForNothing: false,
  },
  {
    name: "a delete during a reconcile runs again",
    event: { type: "delete", object: object("11", 1) },
    processing: true,
    ownAtEvent: ["11"],
    ownAtEnd: ["11"],
    asksForNothing: false,
    cancelReadd: false,
  },
  {
    name: "a relist adding an object this process wrote (no old state to compare)",
    event: { type: "add", object: object("11", 1) },
    processing: false,
    ownAtEvent: ["11"],
    ownAtEnd: ["11"],
    asksForNothing: false,
  },
  {
    name: "a relist adding an object during its reconcile runs again",
    event: { type: "add", object: object("11", 1) },
    processing: true,
    ownAtEvent: ["11"],
    ownAtEnd: ["11"],
    asksForNothing: false,
    cancelReadd: false,
  },
  {
    name: "a relist update that is the echo of an own write",
    event: { type: "update", old: before, object: object("11", 1, { labels: { a: "b" } }) },
    processing: false,
    ownAtEvent: ["11"],
    ownAtEnd: ["11"],
    asksForNothing: true,
  },
  {
    name: "a relist update of a status-only change",
    event: { type: "update", old: before, object: object("11", 1, { phase: "Failed" }) },
    processing: false,
    ownAtEvent: [],
    ownAtEnd: [],
    asksForNothing: true,
  },
];

/** A filter over a mutable set of own writes and a mutable "being reconciled" flag. */
function harness(processing: boolean, own: string[]) {
  const state = { processing, own: new Set(own) };
  const filter = new OwnWriteEchoFilter({
    isOwnWrite: (obj) => state.own.has(obj.metadata?.resourceVersion ?? ""),
    isProcessing: (key) => state.processing && key === KEY,
  });
  return { state, filter };
}

describe("OwnWriteEchoFilter", () => {
  it.each(cases)("$name", (c) => {
    const { state, filter } = harness(c.processing, c.ownAtEvent);
    const ignored = filter.asksForNothing(c.event);
    expect(ignored).toBe(c.asksForNothing);
    if (!ignored) filter.noteAdd(KEY, c.event);
    state.own = new Set(c.ownAtEnd);
    // What the runner does after a successful reconcile of the key.
    if (c.processing) expect(filter.onlyOwnEchoes(KEY)).toBe(c.cancelReadd ?? false);
  });

  it("cancels nothing when nothing re-added the key during its reconcile", () => {
    const { filter } = harness(true, ["11"]);
    expect(filter.onlyOwnEchoes(KEY)).toBe(false);
  });

  it("cancels only when every possible echo of the reconcile was its own write", () => {
    const { state, filter } = harness(true, []);
    for (const rv of ["11", "12"]) {
      const ev: StoreEvent = {
        type: "update",
        old: before,
        object: object(rv, 1, { labels: { rv } }),
      };
      expect(filter.asksForNothing(ev)).toBe(false);
      filter.noteAdd(KEY, ev);
    }
    state.own = new Set(["11"]);
    expect(filter.onlyOwnEchoes(KEY)).toBe(false);
  });

  it("runs again when a watched object or a resync re-added the key besides an echo", () => {
    const { state, filter } = harness(true, []);
    const echo = labelEcho();
    filter.noteAdd(KEY, echo);
    filter.markRerun(KEY);
    state.own = new Set(["11"]);
    expect(filter.onlyOwnEchoes(KEY)).toBe(false);
  });

  it("marks no rerun for a key that is not being reconciled", () => {
    const { state, filter } = harness(false, []);
    filter.markRerun(KEY);
    state.processing = true;
    const echo = labelEcho();
    filter.noteAdd(KEY, echo);
    state.own = new Set(["11"]);
    expect(filter.onlyOwnEchoes(KEY)).toBe(true);
  });

  it("forgets a key's notes when its reconcile ends, and after an answer given", () => {
    const { state, filter } = harness(true, []);
    const echo = labelEcho();
    filter.noteAdd(KEY, echo);
    filter.markRerun(KEY);
    filter.forget(KEY);
    state.own = new Set(["11"]);
    expect(filter.onlyOwnEchoes(KEY)).toBe(false);
    filter.noteAdd(KEY, echo);
    expect(filter.onlyOwnEchoes(KEY)).toBe(true);
    expect(filter.onlyOwnEchoes(KEY)).toBe(false);
  });
});
