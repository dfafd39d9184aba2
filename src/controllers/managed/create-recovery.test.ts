import { describe, expect, it } from "vitest";
import { client, condition, KEY, loop, world } from "../../../test/support/managed-world.js";
import type { KubeObject } from "../../runtime/resource.js";
import {
  createInFlightMs,
  decideAfterLookup,
  type LookupInput,
  rememberCreateEnded,
} from "./create-recovery.js";
import { ANNOTATIONS, formatPending, markerInFlightMs, readCreateState } from "./decisions.js";

const AT = "2026-01-01T00:00:00Z";
const atMs = Date.parse(AT);

describe("how long a create whose answer was lost may still take effect", () => {
  it("is, for a new marker, reconcileTimeoutMs plus the request timeout; no bound without a reconcile bound", () => {
    expect(markerInFlightMs({ reconcileTimeoutMs: 60_000, requestTimeoutMs: 10_000 })).toBe(70_000);
    expect(markerInFlightMs({})).toBe(70_000);
    expect(markerInFlightMs({ reconcileTimeoutMs: 0, requestTimeoutMs: 10_000 })).toBeNull();
  });

  it("is what the marker records, whatever this process's figures (a restart with another config)", () => {
    const bounds = { reconcileTimeoutMs: 1_000, requestTimeoutMs: 1_000 };
    expect(
      createInFlightMs({ token: "a", at: AT, generation: 1, inFlightMs: 70_000 }, bounds),
    ).toBe(70_000);
    expect(createInFlightMs({ token: "b", at: AT, generation: 1, inFlightMs: null }, bounds)).toBe(
      Number.POSITIVE_INFINITY,
    );
    // A marker written without the figure: this process's.
    expect(createInFlightMs({ token: "c", at: AT, generation: 1 }, bounds)).toBe(2_000);
  });

  it("ends the request timeout after the call ended where this process sent it", () => {
    const bounds = { reconcileTimeoutMs: 0, requestTimeoutMs: 5_000 };
    const pending = { token: "sent-here", at: AT, generation: 1, inFlightMs: null };
    rememberCreateEnded("sent-here", atMs + 3_000);
    expect(createInFlightMs(pending, bounds)).toBe(8_000);
    // Never later than the marker's bound.
    expect(createInFlightMs({ ...pending, inFlightMs: 6_000 }, bounds)).toBe(6_000);
  });

  it("travels in the create-pending annotation", () => {
    const read = (inFlightMs?: number | null) =>
      readCreateState({
        "aidc.io/create-pending": formatPending({
          token: "t",
          at: AT,
          generation: 2,
          ...(inFlightMs === undefined ? {} : { inFlightMs }),
        }),
      }).pending;
    expect(read(70_000)).toEqual({ token: "t", at: AT, generation: 2, inFlightMs: 70_000 });
    expect(read(null)).toEqual({ token: "t", at: AT, generation: 2, inFlightMs: null });
    expect(read()).toEqual({ token: "t", at: AT, generation: 2 });
    const odd = readCreateState({
      "aidc.io/create-pending": JSON.stringify({
        token: "t",
        at: AT,
        generation: 2,
        inFlightMs: "x",
      }),
    }).pending;
    expect(odd).toEqual({ token: "t", at: AT, generation: 2 });
  });
});

describe("a lookup that finds nothing", () => {
  const base: LookupInput = {
    token: "tok-1",
    found: [],
    pendingAgeMs: 0,
    inFlightMs: 70_000,
    visibilityGraceMs: 30_000,
  };
  const decide = (pendingAgeMs: number, inFlightMs = base.inFlightMs) =>
    decideAfterLookup({ ...base, pendingAgeMs, inFlightMs });

  it("waits until the create can no longer take effect and the window after that has passed", () => {
    expect(decide(31_000).decision).toBe("Wait");
    expect(decide(99_500)).toEqual({ decision: "Wait", requeueAfterMs: 1_000 });
    const after = decide(100_000);
    expect(after.decision).toBe("Unknown");
    expect(after.decision === "Unknown" && after.message).toMatch(
      /within the visibility window \(30 s, service.listVisibilityWindowMs\) after the create could last take effect/,
    );
  });

  it("stops after the window where nothing bounds when the create was sent, saying why", () => {
    const d = decide(31_000, Number.POSITIVE_INFINITY);
    expect(d.decision).toBe("Unknown");
    expect(d.decision === "Unknown" && d.message).toMatch(/reconcileTimeoutMs 0/);
  });
});

describe("the lookup of a create a stopped process left", () => {
  // 10 s before the world's clock; the loop's window is 5 s.
  const left = (inFlightMs?: number | null) => {
    const marker = { token: "t-left", at: AT, generation: 1 };
    const w = world(
      {},
      {
        [ANNOTATIONS.createPending]: JSON.stringify(
          inFlightMs === undefined ? marker : { ...marker, inFlightMs },
        ),
      },
    );
    const c = client(() => w, {
      tokenAbsence: async () => {
        w.calls.push("absence");
        return "Absent";
      },
    });
    return { w, reconcile: () => loop(c).reconcile(KEY, w.ctx) };
  };
  const syncedMessage = (o: KubeObject | undefined) =>
    (
      o?.status as { conditions?: { type: string; message: string }[] } | undefined
    )?.conditions?.find((c) => c.type === "Synced")?.message;

  it("looks it up while it may take effect and the window after that, then lets the list prove it absent", async () => {
    const early = left(70_000);
    await early.reconcile();
    expect(early.w.calls).toEqual(["write finalizers", "lookup", "write status"]);
    expect(condition(early.w.obj, "Synced")).toBe("CreateOutcomePending");
    expect(syncedMessage(early.w.obj)).toMatch(
      /until 2026-01-01T00:01:15(\.000)?Z: the create may take effect until 2026-01-01T00:01:10(\.000)?Z \(service\.timeoutMs after its call ended; where the process that sent it stopped, reconcileTimeoutMs \+ service\.timeoutMs after it was recorded\)/,
    );
    const late = left(4_000);
    await late.reconcile();
    expect(late.w.calls).toEqual(["write finalizers", "lookup", "absence", "write status"]);
  });

  it("bounds one recorded without the figure by this process's timeouts (60 s + 10 s)", async () => {
    const legacy = left();
    await legacy.reconcile();
    expect(legacy.w.calls).toEqual(["write finalizers", "lookup", "write status"]);
    expect(condition(legacy.w.obj, "Synced")).toBe("CreateOutcomePending");
  });

  it("never sends again one whose sending nothing bounds (reconcileTimeoutMs 0): it stops after the window", async () => {
    const unbounded = left(null);
    await unbounded.reconcile();
    expect(unbounded.w.calls).not.toContain("absence");
    expect(condition(unbounded.w.obj, "Synced")).toBe("CreateOutcomeUnknown");
    expect(unbounded.w.events).toEqual(["Warning CreateOutcomeUnknown"]);
  });
});

describe("the deletion under Delete of an object whose create a stopped process left", () => {
  const deleted = (inFlightMs: number | null) => {
    const marker = { token: "t-left", at: AT, generation: 1, inFlightMs };
    const w = world(
      { deletionPolicy: "Delete" },
      { [ANNOTATIONS.createPending]: JSON.stringify(marker) },
    );
    w.set((o) => ({
      ...o,
      metadata: { ...o.metadata, finalizers: ["test.io/f"], deletionTimestamp: AT },
    }));
    const c = client(() => w, {
      tokenAbsence: async () => {
        w.calls.push("absence");
        return "Absent";
      },
      delete: async () => "Deleted",
    });
    return { w, reconcile: () => loop(c).reconcile(KEY, w.ctx) };
  };

  it("waits while the create may take effect, then lets the list prove it absent", async () => {
    const early = deleted(70_000);
    await early.reconcile();
    expect(early.w.calls).toEqual(["lookup", "write status"]);
    expect(condition(early.w.obj, "Ready")).toBe("Deleting");
    const late = deleted(4_000);
    await late.reconcile();
    expect(late.w.calls).toContain("absence");
  });

  it("keeps the finalizer of one whose sending nothing bounds, whatever the list shows", async () => {
    const unbounded = deleted(null);
    await unbounded.reconcile();
    expect(unbounded.w.calls).not.toContain("absence");
    expect(unbounded.w.obj?.metadata?.finalizers).toEqual(["test.io/f"]);
    expect(condition(unbounded.w.obj, "Synced")).toBe("CreateOutcomeUnknown");
  });
});
