import { describe, expect, it } from "vitest";
import {
  client,
  condition,
  KEY,
  loop,
  type W,
  world,
} from "../../../test/support/managed-world.js";
import type { ConditionReason } from "../../crds/reasons.js";
import type { Observation } from "./call.js";
import { ANNOTATIONS } from "./decisions.js";

/**
 * A change the service accepts may show in its reads only later (a NAS scale shows in
 * the quota seconds after it is accepted). Until a read shows it, the object is not
 * Synced as if all were done: kstatus, Argo CD and `kubectl wait` would take it as done.
 */
describe("a change sent but not shown yet", () => {
  /** A bound object whose service shows an accepted change at once or only on `show()`. */
  function setup(showsAtOnce: boolean) {
    const w: W = world({}, { [ANNOTATIONS.externalId]: "id-1" });
    let shown = "old";
    let desired = "old";
    const observe = async (): Promise<Observation<string>> => {
      w.calls.push("observe");
      return {
        exists: true,
        upToDate: shown === desired,
        ready: { status: "True", reason: "Available", message: "" },
        remote: shown,
      };
    };
    const sent: string[] = [];
    const c = client(() => w, {
      observe,
      update: async () => {
        sent.push(desired);
        if (showsAtOnce) shown = desired;
        return { outcome: "Applied", message: `sent ${desired}` };
      },
    });
    const { reconcile } = loop(c);
    return {
      w,
      sent,
      reconcileNow: () => reconcile(KEY, w.ctx),
      want: (v: string) => {
        desired = v;
      },
      show: () => {
        shown = desired;
      },
    };
  }

  it("is Synced Updating (under way) until a read shows it, then ReconcileSuccess", async () => {
    const s = setup(false);
    await s.reconcileNow();
    expect(condition(s.w.obj, "Synced")).toBe("ReconcileSuccess");
    s.want("new");
    await s.reconcileNow();
    expect(s.sent).toEqual(["new"]);
    expect(condition(s.w.obj, "Synced")).toBe("Updating");
    expect(condition(s.w.obj, "Reconciling")).toBe("Updating");
    s.show();
    await s.reconcileNow();
    expect(s.sent).toEqual(["new"]);
    expect(condition(s.w.obj, "Synced")).toBe("ReconcileSuccess");
    expect(condition(s.w.obj, "Reconciling")).toBeUndefined();
  });

  it("is ReconcileSuccess at once when the read after the change shows it", async () => {
    const s = setup(true);
    await s.reconcileNow();
    s.want("new");
    await s.reconcileNow();
    expect(s.sent).toEqual(["new"]);
    expect(condition(s.w.obj, "Synced")).toBe("ReconcileSuccess");
    expect(condition(s.w.obj, "Reconciling")).toBeUndefined();
  });
});

describe("a change the kind refuses", () => {
  it("records its Warning once while Synced says the same refusal, again when it changes", async () => {
    const w: W = world({}, { [ANNOTATIONS.externalId]: "id-1" });
    let refusal = "the server does not keep the field";
    const c = client(() => w, {
      observe: async () => ({
        exists: true,
        upToDate: false,
        ready: { status: "True", reason: "Available", message: "" },
        remote: "r",
      }),
      update: async () => ({
        outcome: "Refused",
        reason: "FieldNotKept" as ConditionReason,
        message: refusal,
      }),
    });
    const { reconcile } = loop(c);
    for (let poll = 0; poll < 3; poll++) await reconcile(KEY, w.ctx);
    expect(condition(w.obj, "Synced")).toBe("FieldNotKept");
    expect(w.events.filter((e) => e === "Warning FieldNotKept")).toHaveLength(1);
    refusal = "the server does not keep two fields";
    await reconcile(KEY, w.ctx);
    expect(w.events.filter((e) => e === "Warning FieldNotKept")).toHaveLength(2);
  });
});
