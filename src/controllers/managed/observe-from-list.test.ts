import { describe, expect, it } from "vitest";
import type { ReconcileContext } from "../../runtime/controller.js";
import type { ListedObservation, ManagedObject, Observation } from "./call.js";
import { ANNOTATIONS } from "./decisions.js";
import type { KindClient } from "./external-client.js";
import { observe } from "./observe.js";
import { ManagedRun } from "./run.js";

const NOW = Date.parse("2026-01-01T00:01:00Z");
const POLL = 30_000;
const READY = { status: "True" as const, reason: "Available" as const, message: "" };

/** A bound object whose last reconcile left it settled (or `change`d from that). */
function settledObject(change: (o: ManagedObject) => ManagedObject = (o) => o): ManagedObject {
  const cond = (type: string, reason: string) => ({
    type,
    status: "True" as const,
    reason,
    message: "",
    observedGeneration: 1,
    lastTransitionTime: "2026-01-01T00:00:00Z",
  });
  return change({
    metadata: {
      namespace: "ns",
      name: "a",
      generation: 1,
      annotations: { [ANNOTATIONS.externalId]: "id-1" },
    },
    spec: {},
    status: { conditions: [cond("Ready", "Available"), cond("Synced", "ReconcileSuccess")] },
  });
}

/**
 * The observe step over a fake client whose list answers `listed` (or throws it, when it
 * is an Error); records the calls.
 */
async function observeWith(
  obj: ManagedObject,
  listed: ListedObservation<string> | undefined | Error,
  detail: Partial<Observation<string> & { exists: true }> = {},
) {
  const calls: string[] = [];
  const client: KindClient<ManagedObject, string> = {
    observe: async (): Promise<Observation<string>> => {
      calls.push("detail");
      return { exists: true, upToDate: true, ready: READY, remote: "from-detail", ...detail };
    },
    observeFromList: async (_call, _id, maxAgeMs) => {
      calls.push(`list (age < ${maxAgeMs})`);
      if (listed instanceof Error) throw listed;
      return listed;
    },
    create: async () => ({}),
    lookupByToken: async () => [],
    update: async () => ({ outcome: "Applied", message: "" }),
    delete: async () => "Deleted",
  };
  const ctx = {
    clock: { now: () => new Date(NOW) },
    events: { normal: () => {}, warning: () => {} },
  } as unknown as ReconcileContext;
  const run = new ManagedRun(
    { resource: {} as never, finalizer: "f", connect: () => client, status: () => ({}) },
    obj,
    ctx,
    () => client,
  );
  const next = await observe(run, "id-1", { pollIntervalMs: POLL });
  if (next.step !== "Done") throw new Error(`the observe step answered ${next.step}`);
  const outcome = next.outcome;
  return { calls, outcome };
}

const fromList = (fetchedAt: number): ListedObservation<string> => ({
  observation: { exists: true, upToDate: true, ready: READY, remote: "from-list" },
  fetchedAt,
});

describe("observe, a settled object's poll from the kind's list", () => {
  it("answers from a list snapshot no older than the poll interval, without a detail read", async () => {
    const { calls, outcome } = await observeWith(settledObject(), fromList(NOW - 10_000));
    expect(calls).toEqual([`list (age < ${POLL})`]);
    expect(outcome.remote).toBe("from-list");
    expect(outcome.ready).toEqual(READY);
    expect(outcome.priority).toBe("low");
    // The next poll is due when the snapshot turns one interval old (the next walk).
    expect(outcome.requeueAfterMs).toBe(20_000);
  });

  it("reads the detail when the list cannot answer (disabled, failed, id missing, field missing, change to make)", async () => {
    const { calls, outcome } = await observeWith(settledObject(), undefined);
    expect(calls).toEqual([`list (age < ${POLL})`, "detail"]);
    expect(outcome.remote).toBe("from-detail");
    expect(outcome.requeueAfterMs).toBe(POLL);
  });

  it("looks again soon, as a follow-up (behind work, before routine polls), after a read that left parts for later", async () => {
    const { outcome } = await observeWith(settledObject(), undefined, { partial: true });
    expect(outcome.remote).toBe("from-detail");
    // soonPollMs: five first subscription polls (1 s by default), below the interval.
    expect(outcome.requeueAfterMs).toBe(5_000);
    expect(outcome.priority).toBe("deferred");
    // A whole read waits the poll interval, as a routine poll.
    const whole = await observeWith(settledObject(), undefined);
    expect(whole.outcome.requeueAfterMs).toBe(POLL);
    expect(whole.outcome.priority).toBe("low");
  });

  it("lets the kind's own failure in its list answer fail the reconcile, not hide behind the detail read", async () => {
    const bug = new TypeError("Cannot read properties of undefined (reading 'status')");
    // Before, the failure was swallowed and the detail read answered instead.
    await expect(observeWith(settledObject(), bug)).rejects.toMatchObject({
      message: `cannot observe the remote resource: ${bug.message}`,
      cause: bug,
    });
  });

  it("reads the detail for an object that needs attention now", async () => {
    const unsettled: [string, (o: ManagedObject) => ManagedObject][] = [
      ["a spec not acted on", (o) => ({ ...o, metadata: { ...o.metadata, generation: 2 } })],
      [
        "being deleted",
        (o) => ({ ...o, metadata: { ...o.metadata, deletionTimestamp: "2026-01-01T00:00:30Z" } }),
      ],
      [
        "an error",
        (o) => ({
          ...o,
          status: {
            conditions: (o.status?.conditions ?? []).map((c) =>
              c.type === "Synced" ? { ...c, status: "False" as const, reason: "ObserveFailed" } : c,
            ),
          },
        }),
      ],
      [
        "coming up",
        (o) => ({
          ...o,
          status: {
            conditions: (o.status?.conditions ?? []).map((c) =>
              c.type === "Ready" ? { ...c, status: "False" as const, reason: "Creating" } : c,
            ),
          },
        }),
      ],
      [
        "a change waiting",
        (o) => ({
          ...o,
          status: {
            conditions: (o.status?.conditions ?? []).map((c) =>
              c.type === "Synced" ? { ...c, reason: "Updating" } : c,
            ),
          },
        }),
      ],
    ];
    for (const [what, change] of unsettled) {
      const { calls } = await observeWith(settledObject(change), fromList(NOW));
      expect(calls, what).toEqual(["detail"]);
    }
  });
});
