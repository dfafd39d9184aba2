/** The create protocol as the managed reconciler runs it: writes, polls, lost answers. */
import { describe, expect, it } from "vitest";
import {
  CREATE_PENDING_WITH_FINALIZER,
  client,
  condition,
  KEY,
  loop,
  world,
} from "../../../test/support/managed-world.js";
import { ServiceRefusedError, ServiceUnavailableError } from "../../service/errors.js";
import { ANNOTATIONS } from "./decisions.js";

describe("the create of a managed object", () => {
  it("adds the finalizer with the pending record before the create call, polls at once, and writes the key when the order is still pending", async () => {
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
      "poll",
      "write annotations",
      "write status",
    ]);
    expect(w.writes).toEqual([
      CREATE_PENDING_WITH_FINALIZER,
      { [ANNOTATIONS.subscriptionKey]: "key-1" },
      { status: "set" },
    ]);
    expect(w.obj?.metadata?.annotations?.[ANNOTATIONS.subscriptionKey]).toBe("key-1");
    expect(w.obj?.metadata?.annotations?.[ANNOTATIONS.createPending]).toBeDefined();
    expect(condition(w.obj, "Ready")).toBe("Creating");
    expect(result).toEqual({ requeueAfterMs: 1_000 });
    expect(w.events).toEqual(["Normal CreateRequested"]);

    // The next poll binds the id, keeps the pending marker beside it, and observes.
    pendingPoll = false;
    w.calls.length = 0;
    const next = await reconcile(KEY, w.ctx);
    expect(w.calls).toEqual(["poll", "write annotations", "observe", "write status"]);
    expect(w.obj?.metadata?.annotations?.[ANNOTATIONS.externalId]).toBe("id-1");
    expect(w.obj?.metadata?.annotations?.[ANNOTATIONS.createPending]).toBeDefined();
    expect(w.obj?.status).toMatchObject({ id: "id-1", observedGeneration: 1 });
    expect(condition(w.obj, "Ready")).toBe("Available");
    // Settled: the next look is a routine poll, behind keys with work in the queue.
    expect(next).toEqual({ requeueAfterMs: 30_000, priority: "low" });
  });

  it("writes the kind's pending annotations in the marker's write, so no write stands between the marker and the create", async () => {
    const w = world({});
    const { reconcile } = loop(
      client(() => w, {
        pendingAnnotations: () => ({ "test.io/body": "h1" }),
        create: async (call) => {
          const body = call.obj.metadata?.annotations?.["test.io/body"] ?? "MISSING";
          w.calls.push(`create (body ${body})`);
          return { externalId: "id-1" };
        },
      }),
    );
    await reconcile(KEY, w.ctx);
    expect(w.calls.slice(0, 2)).toEqual(["write annotations,finalizers", "create (body h1)"]);
    expect(w.writes[0]).toEqual({ ...CREATE_PENDING_WITH_FINALIZER, "test.io/body": "h1" });
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

  it("binds the id in one write with the key, in the same reconcile, when the first poll already succeeds", async () => {
    const w = world({});
    const { reconcile } = loop(client(() => w));
    const result = await reconcile(KEY, w.ctx);
    expect(w.calls).toEqual([
      "write annotations,finalizers",
      "create (pending recorded)",
      "poll",
      "write annotations",
      "observe",
      "write status",
    ]);
    // Two metadata writes: [create-pending + finalizer, external id]; no write of the key alone.
    expect(w.writes).toEqual([
      CREATE_PENDING_WITH_FINALIZER,
      { [ANNOTATIONS.externalId]: "id-1", [ANNOTATIONS.subscriptionKey]: "key-1" },
      { status: "set" },
    ]);
    expect(w.obj?.metadata?.annotations?.[ANNOTATIONS.subscriptionKey]).toBe("key-1");
    expect(w.obj?.metadata?.finalizers).toEqual(["test.io/f"]);
    expect(w.obj?.metadata?.annotations?.[ANNOTATIONS.externalId]).toBe("id-1");
    expect(w.obj?.metadata?.annotations?.[ANNOTATIONS.createPending]).toBeDefined();
    expect(condition(w.obj, "Ready")).toBe("Available");
    expect(condition(w.obj, "Synced")).toBe("ReconcileSuccess");
    expect(result.requeueAfterMs).toBe(30_000);
    // One Event tells the order bound at once.
    expect(w.events).toEqual(["Normal Created"]);
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
    expect(w.writes).toEqual([
      CREATE_PENDING_WITH_FINALIZER,
      { [ANNOTATIONS.subscriptionKey]: "key-1" },
      { status: "set" },
    ]);
    expect(w.obj?.metadata?.annotations?.[ANNOTATIONS.subscriptionKey]).toBe("key-1");
    expect(condition(w.obj, "Ready")).toBe("Creating");
    expect(condition(w.obj, "Synced")).toBe("ReconcileSuccess");
    expect(result.requeueAfterMs).toBe(1_000);
    // A later poll that fails is an error (backoff, Synced=False by the error policy).
    await expect(reconcile(KEY, w.ctx)).rejects.toThrow(/cannot read the outcome/);
  });

  it("leaves the pending marker alone when the id write after the first poll is lost, and adopts by token without a second create", async () => {
    const w = world({});
    const kube = w.ctx.kube as unknown as { patch: (...a: unknown[]) => Promise<unknown> };
    const patch = kube.patch;
    kube.patch = async (...args) => {
      if (w.writes.length === 1) throw new Error("connection reset by the API server");
      return patch(...args);
    };
    let listed: string[] = [];
    const { reconcile } = loop(
      client(() => w, {
        lookupByToken: async () => {
          w.calls.push("lookup");
          return listed;
        },
      }),
    );
    await expect(reconcile(KEY, w.ctx)).rejects.toThrow(/connection reset/);
    // Neither key nor id landed: the marker alone records the order, as after a crash.
    const annotations = w.obj?.metadata?.annotations ?? {};
    expect(annotations[ANNOTATIONS.createPending]).toBeDefined();
    expect(annotations[ANNOTATIONS.subscriptionKey]).toBeUndefined();
    expect(annotations[ANNOTATIONS.externalId]).toBeUndefined();
    kube.patch = patch;
    w.calls.length = 0;
    // Not listed yet (the visibility window): looked up again later, never created again.
    expect((await reconcile(KEY, w.ctx)).requeueAfterMs).toBeGreaterThan(0);
    listed = ["id-1"];
    await reconcile(KEY, w.ctx);
    expect(w.calls.filter((c) => c.startsWith("create"))).toEqual([]);
    expect(w.calls.filter((c) => c === "lookup")).toHaveLength(2);
    expect(w.obj?.metadata?.annotations?.[ANNOTATIONS.externalId]).toBe("id-1");
    expect(w.obj?.metadata?.annotations?.[ANNOTATIONS.createPending]).toBeDefined();
    expect(w.events).toContain("Normal Recovered");
  });

  it("keeps the marker when admission drops the id from the bind write: after a crash there, its token finds the resource, no second create", async () => {
    const w = world({});
    const kube = w.ctx.kube as unknown as { patch: (...a: unknown[]) => Promise<unknown> };
    const patch = kube.patch;
    let stripped = 0;
    kube.patch = async (res, key, body) => {
      const meta = (body as { metadata?: { annotations?: Record<string, unknown> } }).metadata;
      if (stripped > 0) throw new Error("the process was killed");
      if (meta?.annotations?.[ANNOTATIONS.externalId] !== undefined) {
        // A mutating webhook drops the id the write adds; the process dies right after.
        const { [ANNOTATIONS.externalId]: _dropped, ...kept } = meta.annotations;
        stripped++;
        return patch(res, key, { ...(body as object), metadata: { ...meta, annotations: kept } });
      }
      return patch(res, key, body);
    };
    const { reconcile } = loop(
      client(() => w, {
        // The id at once: no subscription key is written that a poll could bind by.
        create: async () => {
          w.calls.push("create");
          return { externalId: "id-1" };
        },
        lookupByToken: async () => {
          w.calls.push("lookup");
          return ["id-1"];
        },
      }),
    );
    await expect(reconcile(KEY, w.ctx)).rejects.toThrow();
    expect(stripped).toBe(1);
    expect(w.obj?.metadata?.annotations?.[ANNOTATIONS.subscriptionKey]).toBeUndefined();
    expect(w.obj?.metadata?.annotations?.[ANNOTATIONS.externalId]).toBeUndefined();
    expect(w.obj?.metadata?.annotations?.[ANNOTATIONS.createPending]).toBeDefined();
    // The next leader reads what is stored: the marker's token finds the one resource.
    kube.patch = patch;
    await reconcile(KEY, w.ctx);
    expect(w.calls.filter((c) => c.startsWith("create"))).toHaveLength(1);
    expect(w.calls).toContain("lookup");
    expect(w.obj?.metadata?.annotations?.[ANNOTATIONS.externalId]).toBe("id-1");
  });

  it("writes the key when the first poll succeeds without an id that the token can find, and polls it later", async () => {
    const w = world({});
    let found: string[] = [];
    const { reconcile } = loop(
      client(() => w, {
        pollSubscription: async () => {
          w.calls.push("poll");
          return { state: "Succeeded" };
        },
        lookupByToken: async () => {
          w.calls.push("lookup");
          return found;
        },
      }),
    );
    await reconcile(KEY, w.ctx);
    expect(condition(w.obj, "Synced")).toBe("CreateOutcomeUnknown");
    expect(w.writes.slice(0, 2)).toEqual([
      CREATE_PENDING_WITH_FINALIZER,
      { [ANNOTATIONS.subscriptionKey]: "key-1" },
    ]);
    // The key is the durable record: the next reconcile polls it, and binds what it finds.
    found = ["id-1"];
    w.calls.length = 0;
    await reconcile(KEY, w.ctx);
    expect(w.calls.slice(0, 3)).toEqual(["poll", "lookup", "write annotations"]);
    expect(w.obj?.metadata?.annotations?.[ANNOTATIONS.externalId]).toBe("id-1");
  });

  it("does not order again after a failed subscription until the generation grows", async () => {
    const w = world({});
    const failing = client(() => w, {
      pollSubscription: async () => ({ state: "Failed", message: "no capacity" }),
    });
    const { reconcile } = loop(failing);
    await reconcile(KEY, w.ctx);
    // A failure at the first poll is recorded in one write, without the key's.
    expect(w.writes.slice(0, 2)).toEqual([
      CREATE_PENDING_WITH_FINALIZER,
      {
        [ANNOTATIONS.subscriptionKey]: null,
        [ANNOTATIONS.createPending]: null,
        [ANNOTATIONS.createFailedGeneration]: "1",
      },
    ]);
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

  it("binds what a failed order left (found by its token), says so, and orders nothing more", async () => {
    const w = world({});
    const failing = client(() => w, {
      pollSubscription: async () => ({ state: "Failed", message: "no capacity" }),
      lookupByToken: async () => {
        w.calls.push("lookup");
        return ["id-left"];
      },
    });
    const { reconcile } = loop(failing);
    await reconcile(KEY, w.ctx);
    expect(w.writes[1]).toEqual({
      [ANNOTATIONS.externalId]: "id-left",
      [ANNOTATIONS.subscriptionKey]: "key-1",
    });
    expect(w.events).toContain("Warning CreateFailed");
    expect(w.obj?.status).toMatchObject({ id: "id-left" });
    w.set((o) => ({ ...o, metadata: { ...o.metadata, generation: 2 } }));
    w.calls.length = 0;
    await reconcile(KEY, w.ctx);
    expect(w.calls.filter((c) => c.startsWith("create") || c === "poll")).toEqual([]);
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
});
