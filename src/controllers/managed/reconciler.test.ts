import { describe, expect, it } from "vitest";
import { client, condition, KEY, loop, world } from "../../../test/support/managed-world.js";
import type { ConditionReason } from "../../crds/reasons.js";
import { TRAINING_JOB_REASONS } from "../../crds/trainingjob.js";
import { ConflictError } from "../../runtime/errors.js";
import type { KubeObject } from "../../runtime/resource.js";
import { ServiceRefusedError } from "../../service/errors.js";
import type { ReadyState, SubscriptionPoll } from "./call.js";
import { ANNOTATIONS } from "./decisions.js";
import { managedSettled } from "./reconciler.js";

const TJ = TRAINING_JOB_REASONS.names;

describe("managedReconciler", () => {
  it("keeps the previous status's remote fields when nothing was observed, and writes the kind's fact fields anew", async () => {
    const statusOf = async (factFields?: readonly string[]) => {
      const w = world({}, { [ANNOTATIONS.subscriptionKey]: "key-1" });
      w.set((o) => ({
        ...o,
        status: { remoteState: "Running", id: "old", phase: "Ready", conditions: [] },
      }));
      const { reconcile } = loop(
        client(() => w, { pollSubscription: async () => ({ state: "Pending" }) }),
        {
          status: (_o, f) => ({ id: f.subscriptionKey ?? "none", phase: "Creating" }),
          ...(factFields ? { factFields } : {}),
        },
      );
      await reconcile(KEY, w.ctx);
      const {
        conditions: _c,
        observedGeneration: _g,
        ...rest
      } = (w.obj?.status ?? {}) as Record<string, unknown>;
      return rest;
    };
    // The subscription is pending: no remote record in this reconcile.
    expect(await statusOf(["id", "phase"])).toEqual({
      remoteState: "Running",
      id: "key-1",
      phase: "Creating",
    });
    // A kind that names no fact fields writes what its status answers, alone.
    expect(await statusOf()).toEqual({ id: "key-1", phase: "Creating" });
  });

  it("calls an object settled (routine polls only) once it is bound and neither coming up nor changing", async () => {
    // Being created: a create pending, then Creating.
    const w = world({});
    let pendingPoll = true;
    let ready: ReadyState = { status: "True", reason: "Available", message: "" };
    const { reconcile } = loop(
      client(() => w, {
        pollSubscription: async () =>
          pendingPoll ? { state: "Pending" } : { state: "Succeeded", externalId: "id-1" },
        observe: async () => ({ exists: true, upToDate: true, ready, remote: "r" }),
      }),
    );
    await reconcile(KEY, w.ctx);
    const settled = () => managedSettled(w.obj as KubeObject);
    expect(condition(w.obj, "Ready")).toBe("Creating");
    expect(settled()).toBe(false);
    pendingPoll = false;
    await reconcile(KEY, w.ctx);
    expect(settled()).toBe(true);
    // Stopped (Ready=False, but nothing under way) is settled too.
    ready = { status: "False", reason: TJ.TaskStopped, message: "" };
    await reconcile(KEY, w.ctx);
    expect(settled()).toBe(true);
    const obj = w.obj as KubeObject;
    const meta = obj.metadata ?? {};
    const variant = (m: object, status?: object) =>
      managedSettled({ ...obj, metadata: { ...meta, ...m }, ...(status ? { status } : {}) });
    // A spec not acted on yet, a deletion, an error: not settled.
    expect(variant({ generation: 2 })).toBe(false);
    expect(variant({ deletionTimestamp: "2026-01-01T00:00:00Z" })).toBe(false);
    const conditions = (obj.status as { conditions: { type: string }[] }).conditions;
    const failed = conditions.map((c) =>
      c.type === "Synced" ? { ...c, status: "False", reason: "ObserveFailed" } : c,
    );
    expect(variant({}, { ...(obj.status as object), conditions: failed })).toBe(false);
  });

  it("hands the kind's client a narrow call: the object, references, time, logger, events and annotate, no Kubernetes client or cache", async () => {
    const w = world({}, { [ANNOTATIONS.externalId]: "id-1" });
    const calls: object[] = [];
    const { reconcile } = loop(
      client(() => w, {
        observe: async (call) => {
          calls.push(call);
          return {
            exists: true,
            upToDate: true,
            ready: { status: "True", reason: "Available", message: "" },
            remote: "r",
          };
        },
      }),
    );
    await reconcile(KEY, w.ctx);
    expect(calls).toHaveLength(1);
    const call = calls[0] as Record<string, unknown>;
    expect(Object.keys(call).sort()).toEqual([
      "annotate",
      "log",
      "normal",
      "now",
      "obj",
      "refs",
      "warning",
    ]);
    expect((call.now as () => Date)().toISOString()).toBe("2026-01-01T00:00:10.000Z");
  });

  it("writes nothing when a reconcile finds everything as it was", async () => {
    const w = world({}, { [ANNOTATIONS.externalId]: "id-1" });
    const { reconcile } = loop(client(() => w));
    await reconcile(KEY, w.ctx);
    w.calls.length = 0;
    await reconcile(KEY, w.ctx);
    expect(w.calls).toEqual(["observe"]);
  });

  it("looks again sooner than the poll interval while the resource is still being created", async () => {
    const w = world({}, { [ANNOTATIONS.externalId]: "id-1" });
    const { reconcile } = loop(
      client(() => w, {
        observe: async () => ({
          exists: true,
          upToDate: true,
          ready: { status: "False", reason: "Creating", message: "" },
          remote: "r",
        }),
      }),
    );
    expect(await reconcile(KEY, w.ctx)).toEqual({ requeueAfterMs: 5_000 });
  });

  it("writes Synced=False with the error's reason through the error policy", async () => {
    const w = world({});
    const { onError } = loop(client(() => w));
    await onError(
      KEY,
      new ServiceRefusedError("forbidden words", { code: 400, endpoint: "x" }),
      w.ctx,
      w.obj,
    );
    expect(condition(w.obj, "Synced")).toBe("ReconcileTerminal");
  });

  it("does not report a write conflict, which is retried at once", async () => {
    const w = world({});
    const { onError } = loop(client(() => w));
    await onError(KEY, new ConflictError("status update", new Error("409")), w.ctx, w.obj);
    expect(w.calls).toEqual([]);
  });

  it("orphans with a warning and releases the finalizer when Delete has no delete operation", async () => {
    const w = world({ deletionPolicy: "Delete" }, { [ANNOTATIONS.externalId]: "id-1" });
    w.set((o) => ({
      ...o,
      metadata: {
        ...o.metadata,
        finalizers: ["test.io/f"],
        deletionTimestamp: "2026-01-01T00:00:00Z",
      },
    }));
    const { reconcile } = loop(client(() => w));
    await reconcile(KEY, w.ctx);
    expect(w.obj).toBeUndefined();
    expect(w.events).toEqual(["Warning DeletePolicyNotHonoured"]);
  });

  it("names the subscription and the client token of a create in flight it leaves behind, so a person can find the resource", async () => {
    const deleting = (spec: Record<string, unknown>) => {
      const w = world(spec, {
        [ANNOTATIONS.subscriptionKey]: "sub-9",
        [ANNOTATIONS.createPending]: JSON.stringify({
          token: "tok-9",
          at: "2026-01-01T00:00:00Z",
          generation: 1,
        }),
      });
      w.set((o) => ({
        ...o,
        metadata: {
          ...o.metadata,
          finalizers: ["test.io/f"],
          deletionTimestamp: "2026-01-01T00:00:00Z",
        },
      }));
      return w;
    };
    const orphan = deleting({ deletionPolicy: "Orphan" });
    await loop(client(() => orphan)).reconcile(KEY, orphan.ctx);
    expect(orphan.obj).toBeUndefined();
    expect(orphan.notes).toEqual([
      "Normal Orphaned: a create was in flight (subscription sub-9, client token tok-9); whatever it creates is left in the service (deletionPolicy Orphan)",
    ]);
    // Delete without a delete operation (the test client has none) orphans it too.
    const undeletable = deleting({ deletionPolicy: "Delete" });
    await loop(client(() => undeletable)).reconcile(KEY, undeletable.ctx);
    expect(undeletable.obj).toBeUndefined();
    expect(undeletable.notes).toHaveLength(1);
    expect(undeletable.notes[0]).toMatch(
      /^Warning DeletePolicyNotHonoured: .*: whatever the create in flight \(subscription sub-9, client token tok-9\) makes$/,
    );
  });

  it("waits for a create in flight before deleting under Delete", async () => {
    const w = world(
      { deletionPolicy: "Delete" },
      {
        [ANNOTATIONS.subscriptionKey]: "key-1",
        [ANNOTATIONS.createPending]: JSON.stringify({
          token: "t",
          at: "2026-01-01T00:00:00Z",
          generation: 1,
        }),
      },
    );
    w.set((o) => ({
      ...o,
      metadata: {
        ...o.metadata,
        finalizers: ["test.io/f"],
        deletionTimestamp: "2026-01-01T00:00:00Z",
      },
    }));
    let state: SubscriptionPoll = { state: "Pending" };
    const deleted: string[] = [];
    const { reconcile } = loop(
      client(() => w, {
        pollSubscription: async () => state,
        delete: async (_call, id) => {
          deleted.push(id);
          return "Deleted";
        },
      }),
    );
    const waiting = await reconcile(KEY, w.ctx);
    expect(waiting.requeueAfterMs).toBeGreaterThan(0);
    expect(condition(w.obj, "Ready")).toBe("Deleting");
    state = { state: "Succeeded", externalId: "id-7" };
    await reconcile(KEY, w.ctx);
    expect(deleted).toEqual(["id-7"]);
    expect(w.obj).toBeUndefined();
  });
});

describe("the conditions every managed kind derives", () => {
  const refusing = (reason: ConditionReason) => {
    const w = world({});
    const { reconcile } = loop(
      client(() => w, { preflight: async () => ({ reason, message: `why ${reason}` }) }),
    );
    return { w, reconcile };
  };

  it("makes a wait for something on its way a Normal event and Reconciling", async () => {
    const { w, reconcile } = refusing("NasVolumeNotReady");
    await reconcile(KEY, w.ctx);
    expect(w.events).toEqual(["Normal NasVolumeNotReady"]);
    expect(condition(w.obj, "Reconciling")).toBe("NasVolumeNotReady");
    expect(condition(w.obj, "Stalled")).toBeUndefined();
  });

  it("makes a terminal refusal a Warning event and Stalled", async () => {
    const { w, reconcile } = refusing(TJ.UnknownProductRefused);
    await reconcile(KEY, w.ctx);
    expect(w.events).toEqual(["Warning UnknownProductRefused"]);
    expect(condition(w.obj, "Stalled")).toBe("UnknownProductRefused");
    expect(condition(w.obj, "Reconciling")).toBeUndefined();
  });

  it("says from the first reconcile that a Delete policy cannot be honoured, warning once", async () => {
    const w = world({ deletionPolicy: "Delete" }, { [ANNOTATIONS.externalId]: "id-1" });
    const { reconcile } = loop(client(() => w));
    await reconcile(KEY, w.ctx);
    await reconcile(KEY, w.ctx);
    expect(condition(w.obj, "DeletionPolicy")).toBe("NoDeleteOperation");
    const status = w.obj?.status as { conditions?: { type: string; message: string }[] };
    const conditions = status?.conditions ?? [];
    const message = conditions.find((c) => c.type === "DeletionPolicy")?.message;
    expect(message).toContain("service.endpoints (docs/install.md, Deleting remote resources)");
    expect(w.events.filter((e) => e === "Warning DeletePolicyNotHonoured")).toHaveLength(1);
  });

  it("says nothing of a Delete policy without the Delete management policy: the deletion orphans", async () => {
    const w = world(
      { deletionPolicy: "Delete", managementPolicies: ["Observe"] },
      { [ANNOTATIONS.externalId]: "id-1" },
    );
    const { reconcile } = loop(client(() => w));
    await reconcile(KEY, w.ctx);
    expect(condition(w.obj, "Synced")).toBe("ReconcileSuccess");
    expect(condition(w.obj, "DeletionPolicy")).toBeUndefined();
  });

  it("says a Delete policy is honoured when the delete operation is configured, and nothing for Orphan", async () => {
    const w = world({ deletionPolicy: "Delete" }, { [ANNOTATIONS.externalId]: "id-1" });
    const { reconcile } = loop(
      client(() => w, { delete: async () => "Deleted", deleteConfigured: () => true }),
    );
    await reconcile(KEY, w.ctx);
    expect(condition(w.obj, "DeletionPolicy")).toBe("DeletePolicyHonoured");
    w.set((o) => ({ ...o, spec: { deletionPolicy: "Orphan" } }));
    await reconcile(KEY, w.ctx);
    expect(condition(w.obj, "DeletionPolicy")).toBeUndefined();
  });
});
