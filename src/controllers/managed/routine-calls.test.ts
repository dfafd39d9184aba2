import { describe, expect, it } from "vitest";
import { client, KEY, RES, world } from "../../../test/support/managed-world.js";
import type { CallContext } from "../../service/call-context.js";
import type { ManagedObject, Observation } from "./call.js";
import { ANNOTATIONS, STEERING_ANNOTATIONS } from "./decisions.js";
import type { ManagedKind } from "./external-client.js";
import { managedReconciler } from "./reconciler.js";

/**
 * How the loop makes a reconcile's service calls: as routine observation (the routine
 * budget) for a settled object's poll; as a follow-up (behind other work, outside the
 * budget) for the read of an object Ready but still settling; as work for a change
 * and for a reconcile the user asked for.
 */
describe("the routine mark of a reconcile's service calls", () => {
  /**
   * A bound object whose first look leaves parts for a follow-up (as a TrainingJob's
   * pods: `partial`, PodsObserved=False PodsNotYetRead, Reconciling=True meanwhile), the
   * loop over it, and each remote call with the routine mark it was made under.
   */
  function setup() {
    const w = world({}, { [ANNOTATIONS.externalId]: "id-1" });
    const made: string[] = [];
    const signals: (AbortSignal | undefined)[] = [];
    let looks = 0;
    let upToDate = true;
    const remote = client(() => w);
    const observe = async (): Promise<Observation<string>> => {
      looks += 1;
      return {
        exists: true,
        upToDate,
        ready: { status: "True", reason: "Available", message: "" },
        remote: looks === 1 ? "parts-deferred" : "whole",
        ...(looks === 1 ? { partial: true } : {}),
      };
    };
    const kind: ManagedKind<ManagedObject, string> = {
      resource: RES,
      finalizer: "test.io/f",
      connect: () => remote,
      status: (_o, f) => ({ id: f.externalId }),
      conditions: (_call, _ready, r) =>
        r === "parts-deferred"
          ? [{ type: "PodsObserved", status: "False", reason: "PodsNotYetRead", message: "" }]
          : [{ type: "PodsObserved", remove: true }],
    };
    const { reconcile } = managedReconciler(
      kind,
      { pollIntervalMs: 30_000, subscriptionPollMs: 1_000, visibilityGraceMs: 5_000 },
      (_obj, calls: CallContext) => {
        const mark = calls.routine ? "routine" : calls.followUp ? "follow-up" : "work";
        signals.push(calls.signal);
        return {
          ...remote,
          observe: async () => {
            made.push(`observe: ${mark}`);
            return observe();
          },
          update: async () => {
            made.push(`update: ${mark}`);
            upToDate = true;
            return { outcome: "Applied", message: "" };
          },
        };
      },
    );
    const reconcileNow = async (signal?: AbortSignal) => {
      made.length = 0;
      await reconcile(KEY, signal ? { ...w.ctx, signal } : w.ctx);
      return [...made];
    };
    const drift = () => {
      upToDate = false;
    };
    return { w, reconcileNow, drift, signals };
  }

  const reconciling = (o: unknown) =>
    (
      o as { status?: { conditions?: { type: string; status: string }[] } }
    ).status?.conditions?.find((c) => c.type === "Reconciling")?.status;

  it("makes the follow-up read of an object Ready but still settling a follow-up, not routine, and the poll of a settled one routine", async () => {
    const { w, reconcileNow } = setup();
    // The first look: nothing observed before, so nothing is settled.
    expect(await reconcileNow()).toEqual(["observe: work"]);
    expect(reconciling(w.obj)).toBe("True");
    // Ready already, its parts still to read: a follow-up, outside the routine budget.
    expect(await reconcileNow()).toEqual(["observe: follow-up"]);
    expect(reconciling(w.obj)).toBeUndefined();
    // Settled: its poll is routine observation.
    expect(await reconcileNow()).toEqual(["observe: routine"]);
  });

  it("makes the change a routine poll finds, and the read after it, work", async () => {
    const { reconcileNow, drift } = setup();
    await reconcileNow();
    await reconcileNow();
    drift();
    expect(await reconcileNow()).toEqual(["observe: routine", "update: work", "observe: work"]);
  });

  it("makes a reconcile the user asked for work", async () => {
    const { w, reconcileNow } = setup();
    await reconcileNow();
    await reconcileNow();
    w.set((o) => ({
      ...o,
      metadata: {
        ...o.metadata,
        annotations: {
          ...o.metadata?.annotations,
          [STEERING_ANNOTATIONS.reconcileRequestedAt]: "2026-01-01T00:00:00Z",
        },
      },
    }));
    expect(await reconcileNow()).toEqual(["observe: work"]);
  });

  it("hands the reconcile's deadline signal to every connection it makes", async () => {
    const { reconcileNow, drift, signals } = setup();
    await reconcileNow();
    await reconcileNow();
    drift();
    const deadline = new AbortController().signal;
    await reconcileNow(deadline);
    // The routine look, then the change's own connection: both carry it.
    expect(signals.slice(-2)).toEqual([deadline, deadline]);
  });
});
