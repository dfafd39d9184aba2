import pino from "pino";
import { describe, expect, it } from "vitest";
import type { ReconcileContext } from "../../runtime/controller.js";
import type { KubeObject, ResourceDescriptor } from "../../runtime/resource.js";
import { ConflictError } from "../../runtime/writes.js";
import { ServiceRefusedError, ServiceUnavailableError } from "../../service/errors.js";
import { ANNOTATIONS } from "./create-protocol.js";
import type {
  ExternalClient,
  ManagedObject,
  Observation,
  ReadyState,
  SubscriptionPoll,
} from "./external-client.js";
import { managedReconciler, managedSettled } from "./reconciler.js";

const RES: ResourceDescriptor = {
  group: "test.io",
  version: "v1",
  plural: "things",
  kind: "Thing",
  namespaced: true,
};
const KEY = { namespace: "ns", name: "a" };

/** RFC 7386 merge patch. */
function merge(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== "object" || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> =
    target && typeof target === "object" && !Array.isArray(target)
      ? { ...(target as Record<string, unknown>) }
      : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = merge(out[k], v);
  }
  return out;
}

/** One object in memory behind a fake API server, cache, clock and event recorder. */
function world(spec: Record<string, unknown>, annotations: Record<string, string> = {}) {
  let obj: KubeObject | undefined = {
    metadata: { ...KEY, generation: 1, resourceVersion: "1", annotations },
    spec,
  };
  let rv = 1;
  const calls: string[] = [];
  const events: string[] = [];
  const kube = {
    patch: async (_res: unknown, _key: unknown, body: { metadata?: object }) => {
      const current = obj as KubeObject;
      const { resourceVersion: _rv, ...meta } = (body.metadata ?? {}) as Record<string, unknown>;
      const next = merge(current, { ...body, metadata: meta }) as KubeObject;
      rv += 1;
      next.metadata = { ...next.metadata, resourceVersion: String(rv) };
      const keys = Object.keys(meta);
      calls.push(body.metadata && keys.length ? `write ${keys.join(",")}` : "write status");
      obj =
        next.metadata?.deletionTimestamp && !next.metadata.finalizers?.length ? undefined : next;
      return next;
    },
  };
  const ctx = {
    kube,
    cache: { get: () => obj, byIndex: () => (obj ? [obj] : []) },
    clock: { now: () => new Date("2026-01-01T00:00:10Z") },
    events: {
      normal: (_o: unknown, reason: string) => events.push(`Normal ${reason}`),
      warning: (_o: unknown, reason: string) => events.push(`Warning ${reason}`),
    },
    log: pino({ level: "silent" }),
  } as unknown as ReconcileContext;
  return {
    ctx,
    calls,
    events,
    get obj() {
      return obj;
    },
    set(change: (o: KubeObject) => KubeObject) {
      obj = change(obj as KubeObject);
    },
  };
}

type W = ReturnType<typeof world>;

/** A fake remote resource that records its calls into the world's call list. */
function client(w: () => W, overrides: Partial<ExternalClient<ManagedObject, string>> = {}) {
  const c: ExternalClient<ManagedObject, string> = {
    observe: async (): Promise<Observation<string>> => {
      w().calls.push("observe");
      return {
        exists: true,
        upToDate: true,
        ready: { status: "True", reason: "Available", message: "" },
        remote: "r",
      };
    },
    create: async (call) => {
      const pending = call.obj.metadata?.annotations?.[ANNOTATIONS.createPending];
      w().calls.push(`create (pending ${pending ? "recorded" : "MISSING"})`);
      return { subscriptionKey: "key-1" };
    },
    pollSubscription: async (): Promise<SubscriptionPoll> => {
      w().calls.push("poll");
      return { state: "Succeeded", externalId: "id-1" };
    },
    lookupByToken: async () => {
      w().calls.push("lookup");
      return [];
    },
    update: async () => ({ outcome: "Applied", message: "" }),
    ...overrides,
  };
  return c;
}

function loop(c: ExternalClient<ManagedObject, string>) {
  return managedReconciler(
    { resource: RES, finalizer: "test.io/f", client: c, status: (_o, f) => ({ id: f.externalId }) },
    { pollIntervalMs: 30_000, subscriptionPollMs: 1_000, visibilityGraceMs: 5_000 },
  );
}

const condition = (o: KubeObject | undefined, type: string) =>
  (o?.status as { conditions?: { type: string; reason: string }[] } | undefined)?.conditions?.find(
    (c) => c.type === type,
  )?.reason;

describe("managedReconciler", () => {
  it("adds the finalizer with the pending record before the create call, writes the key right after, and polls at once", async () => {
    const w = world({});
    let pendingPoll = true;
    const { reconcile } = loop(
      client(() => w, {
        create: async (call) => {
          const m = call.obj.metadata;
          const pending = m?.annotations?.[ANNOTATIONS.createPending] ? "recorded" : "MISSING";
          const fin = m?.finalizers?.includes("test.io/f") ? "present" : "MISSING";
          w.calls.push(`create (pending ${pending}, finalizer ${fin})`);
          return { subscriptionKey: "key-1" };
        },
        pollSubscription: async () => {
          w.calls.push("poll");
          return pendingPoll ? { state: "Pending" } : { state: "Succeeded", externalId: "id-1" };
        },
      }),
    );
    const result = await reconcile(KEY, w.ctx);
    expect(w.calls).toEqual([
      "write annotations,finalizers",
      "create (pending recorded, finalizer present)",
      "write annotations",
      "poll",
      "write status",
    ]);
    expect(w.obj?.metadata?.annotations?.[ANNOTATIONS.subscriptionKey]).toBe("key-1");
    expect(condition(w.obj, "Ready")).toBe("Creating");
    expect(result).toEqual({ requeueAfterMs: 1_000 });
    expect(w.events).toEqual(["Normal CreateRequested"]);

    // The next poll binds the id, drops the pending marker, and observes.
    pendingPoll = false;
    w.calls.length = 0;
    const next = await reconcile(KEY, w.ctx);
    expect(w.calls).toEqual(["poll", "write annotations", "observe", "write status"]);
    expect(w.obj?.metadata?.annotations?.[ANNOTATIONS.externalId]).toBe("id-1");
    expect(w.obj?.metadata?.annotations?.[ANNOTATIONS.createPending]).toBeUndefined();
    expect(w.obj?.status).toMatchObject({ id: "id-1", observedGeneration: 1 });
    expect(condition(w.obj, "Ready")).toBe("Available");
    // Settled: the next look is a routine poll, behind keys with work in the queue.
    expect(next).toEqual({ requeueAfterMs: 30_000, lowPriority: true });
  });

  it("creates anew when the pending marker was written but its answer lost, so the create was never sent", async () => {
    const w = world({});
    const kube = w.ctx.kube as unknown as { patch: (...a: unknown[]) => Promise<unknown> };
    const patch = kube.patch;
    let lose = true;
    kube.patch = async (...args) => {
      const written = await patch(...args);
      if (lose) {
        lose = false;
        throw new Error("connection reset by the API server");
      }
      return written;
    };
    const { reconcile } = loop(client(() => w));
    await expect(reconcile(KEY, w.ctx)).rejects.toThrow(/connection reset/);
    expect(w.obj?.metadata?.annotations?.[ANNOTATIONS.createPending]).toBeDefined();
    w.calls.length = 0;
    await reconcile(KEY, w.ctx);
    expect(w.calls).not.toContain("lookup");
    expect(w.calls.filter((c) => c.startsWith("create"))).toEqual(["create (pending recorded)"]);
    expect(w.obj?.metadata?.annotations?.[ANNOTATIONS.externalId]).toBe("id-1");
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
    ready = { status: "False", reason: "TaskStopped", message: "" };
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

  it("binds the id in the same reconcile when the first poll already succeeds", async () => {
    const w = world({});
    const { reconcile } = loop(client(() => w));
    const result = await reconcile(KEY, w.ctx);
    expect(w.calls).toEqual([
      "write annotations,finalizers",
      "create (pending recorded)",
      "write annotations",
      "poll",
      "write annotations",
      "observe",
      "write status",
    ]);
    expect(w.obj?.metadata?.finalizers).toEqual(["test.io/f"]);
    expect(w.obj?.metadata?.annotations?.[ANNOTATIONS.externalId]).toBe("id-1");
    expect(w.obj?.metadata?.annotations?.[ANNOTATIONS.createPending]).toBeUndefined();
    expect(condition(w.obj, "Ready")).toBe("Available");
    expect(condition(w.obj, "Synced")).toBe("ReconcileSuccess");
    expect(result.requeueAfterMs).toBe(30_000);
    expect(w.events).toEqual(["Normal CreateRequested", "Normal Created"]);
  });

  it("treats a failed first poll right after the order as still pending, without an error", async () => {
    const w = world({});
    const { reconcile } = loop(
      client(() => w, {
        pollSubscription: async () => {
          throw new ServiceUnavailableError("HTTP 503", {
            code: 503,
            endpoint: "x",
            outcomeUnknown: false,
          });
        },
      }),
    );
    const result = await reconcile(KEY, w.ctx);
    expect(w.obj?.metadata?.annotations?.[ANNOTATIONS.subscriptionKey]).toBe("key-1");
    expect(condition(w.obj, "Ready")).toBe("Creating");
    expect(condition(w.obj, "Synced")).toBe("ReconcileSuccess");
    expect(result.requeueAfterMs).toBe(1_000);
    // A later poll that fails is an error (backoff, Synced=False by the error policy).
    await expect(reconcile(KEY, w.ctx)).rejects.toThrow(/cannot read the outcome/);
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

  it("does not order again after a failed subscription until the generation grows", async () => {
    const w = world({});
    const failing = client(() => w, {
      pollSubscription: async () => ({ state: "Failed", message: "no capacity" }),
    });
    const { reconcile } = loop(failing);
    await reconcile(KEY, w.ctx);
    await reconcile(KEY, w.ctx);
    expect(condition(w.obj, "Ready")).toBe("CreateFailed");
    expect(w.events).toContain("Warning CreateFailed");
    w.calls.length = 0;
    expect(await reconcile(KEY, w.ctx)).toEqual({});
    expect(w.calls.filter((c) => c.startsWith("create"))).toEqual([]);
    w.set((o) => ({ ...o, metadata: { ...o.metadata, generation: 2 } }));
    await reconcile(KEY, w.ctx);
    expect(w.calls.filter((c) => c.startsWith("create"))).toEqual(["create (pending recorded)"]);
  });

  const createErrors = [
    {
      reason: "a refusal proves no create happened, so the pending marker is dropped",
      err: new ServiceRefusedError("bad", { code: 400, endpoint: "x" }),
      pendingKept: false,
    },
    {
      reason: "a 5xx after sending may have created, so the pending marker is kept",
      err: new ServiceUnavailableError("boom", { code: 500, endpoint: "x", outcomeUnknown: true }),
      pendingKept: true,
    },
    {
      reason: "an error of unknown origin keeps the pending marker",
      err: new Error("socket hang up"),
      pendingKept: true,
    },
  ];
  for (const c of createErrors) {
    it(c.reason, async () => {
      const w = world({});
      const { reconcile } = loop(
        client(() => w, {
          create: async () => {
            throw c.err;
          },
        }),
      );
      await expect(reconcile(KEY, w.ctx)).rejects.toThrow(/cannot create the remote resource/);
      const pending = w.obj?.metadata?.annotations?.[ANNOTATIONS.createPending];
      expect(pending !== undefined).toBe(c.pendingKept);
    });
  }

  it("stops with CreateOutcomeUnknown when a lost create cannot be looked up", async () => {
    const pending = JSON.stringify({ token: "t", at: "2026-01-01T00:00:00Z", generation: 1 });
    const w = world({}, { [ANNOTATIONS.createPending]: pending });
    const { reconcile } = loop(client(() => w, { lookupByToken: async () => undefined }));
    expect(await reconcile(KEY, w.ctx)).toEqual({});
    expect(condition(w.obj, "Synced")).toBe("CreateOutcomeUnknown");
    expect(w.events).toEqual(["Warning CreateOutcomeUnknown"]);
    expect(w.calls.filter((c) => c.startsWith("create"))).toEqual([]);
  });

  it("writes Synced=False with the error's reason through the error policy", async () => {
    const w = world({});
    const { onError } = loop(client(() => w));
    await onError(
      KEY,
      new ServiceRefusedError("forbidden words", { code: 400, endpoint: "x" }),
      w.ctx,
    );
    expect(condition(w.obj, "Synced")).toBe("ReconcileTerminal");
  });

  it("does not report a write conflict, which is retried at once", async () => {
    const w = world({});
    const { onError } = loop(client(() => w));
    await onError(KEY, new ConflictError("status update", new Error("409")), w.ctx);
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
  const refusing = (reason: "NasVolumeNotReady" | "UnknownProductRefused") => {
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
    const { w, reconcile } = refusing("UnknownProductRefused");
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
    expect(w.events.filter((e) => e === "Warning DeletePolicyNotHonoured")).toHaveLength(1);
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
