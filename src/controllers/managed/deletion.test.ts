import { describe, expect, it } from "vitest";
import {
  client,
  condition,
  KEY,
  loop,
  type W,
  world,
} from "../../../test/support/managed-world.js";
import type { KubeObject } from "../../runtime/resource.js";
import { ServiceRefusedError, ServiceUnavailableError } from "../../service/errors.js";
import type { BeforeDeleteResult, DeleteResult, ManagedObject } from "./call.js";
import { ANNOTATIONS } from "./decisions.js";
import type { KindClient } from "./external-client.js";

/** A bound object under deletionPolicy Delete, deleted by the user (finalizer in place). */
function deletedObject(): W {
  const w = world({ deletionPolicy: "Delete" }, { [ANNOTATIONS.externalId]: "id-1" });
  w.set((o) => ({
    ...o,
    metadata: {
      ...o.metadata,
      finalizers: ["test.io/f"],
      deletionTimestamp: "2026-01-01T00:00:00Z",
    },
  }));
  return w;
}

/** A remote resource whose delete answers `answer` and which exists while `exists()`. */
function deletable(
  w: W,
  answer: DeleteResult,
  exists: () => boolean,
  more: Partial<KindClient<never, string>> = {},
) {
  return client(() => w, {
    delete: async (_call, id) => {
      w.calls.push(`delete ${id}`);
      return answer;
    },
    observe: async () => {
      w.calls.push("observe");
      if (!exists()) return { exists: false };
      return {
        exists: true,
        upToDate: true,
        ready: { status: "False", reason: "Unavailable", message: "Releasing" },
        remote: "r",
      };
    },
    ...more,
  });
}

const finalizers = (o: KubeObject | undefined) => o?.metadata?.finalizers ?? [];
const ready = (o: KubeObject | undefined) =>
  (o?.status as { conditions?: { type: string; message: string }[] } | undefined)?.conditions?.find(
    (c) => c.type === "Ready",
  )?.message;

describe("deletion under deletionPolicy Delete", () => {
  it("removes the finalizer right after a delete that answers Deleted", async () => {
    const w = deletedObject();
    const { reconcile } = loop(deletable(w, "Deleted", () => true));
    expect(await reconcile(KEY, w.ctx)).toEqual({});
    expect(w.calls).toEqual(["delete id-1", "write finalizers"]);
    expect(w.obj).toBeUndefined();
    expect(w.events).toEqual(["Normal Deleted"]);
  });

  it("acts no more on a stale copy of the object it released (the watch not yet showing it gone): one delete, one Event", async () => {
    const w = deletedObject();
    w.set((o) => ({ ...o, metadata: { ...o.metadata, uid: "uid-stale-copy" } }));
    const stale = w.obj as KubeObject;
    const { reconcile } = loop(deletable(w, "Deleted", () => false));
    expect(await reconcile(KEY, w.ctx)).toEqual({});
    expect(w.obj).toBeUndefined();
    // The cache still shows the object as it was before the finalizer was removed, and
    // a requeue that was due reconciles it.
    w.set(() => stale);
    w.calls.length = 0;
    expect(await reconcile(KEY, w.ctx)).toEqual({});
    expect(w.calls).toEqual([]);
    expect(w.events).toEqual(["Normal Deleted"]);
  });

  it("keeps the finalizer after a delete that answers InProgress, observes without deleting again, and removes it once the resource is gone", async () => {
    const w = deletedObject();
    let exists = true;
    const { reconcile } = loop(deletable(w, "InProgress", () => exists));
    const first = await reconcile(KEY, w.ctx);
    expect(w.calls).toEqual(["delete id-1", "write annotations", "observe", "write status"]);
    expect(first).toEqual({ requeueAfterMs: 5_000 });
    expect(finalizers(w.obj)).toEqual(["test.io/f"]);
    expect(w.obj?.metadata?.annotations?.[ANNOTATIONS.deleteRequested]).toBe(
      "2026-01-01T00:00:10.000Z",
    );
    expect(condition(w.obj, "Ready")).toBe("Deleting");
    expect(condition(w.obj, "Reconciling")).toBe("Deleting");
    expect(ready(w.obj)).toMatch(/id-1: waiting until the service no longer shows it/);
    expect(w.events).toEqual([]);

    w.calls.length = 0;
    expect(await reconcile(KEY, w.ctx)).toEqual({ requeueAfterMs: 5_000 });
    expect(w.calls).toEqual(["observe"]);
    expect(finalizers(w.obj)).toEqual(["test.io/f"]);

    exists = false;
    w.calls.length = 0;
    expect(await reconcile(KEY, w.ctx)).toEqual({});
    expect(w.calls).toEqual(["observe", "write finalizers"]);
    expect(w.obj).toBeUndefined();
    expect(w.events).toEqual(["Normal Deleted"]);
  });

  it("sends a delete the service refuses again while it still shows the resource, and removes the finalizer once it is gone", async () => {
    const w = deletedObject();
    let exists = true;
    const refusal = new ServiceRefusedError("NAS id-1 is already being released", {
      endpoint: "deleteNas",
      code: 409,
      outcomeUnknown: false,
    });
    const { reconcile } = loop(
      deletable(w, "InProgress", () => exists, {
        delete: async (_call, id) => {
          w.calls.push(`delete ${id}`);
          if (exists) throw refusal;
          return "Deleted";
        },
      }),
    );
    // 10 s into the deletion: half its age.
    expect(await reconcile(KEY, w.ctx)).toEqual({ requeueAfterMs: 5_000 });
    expect(w.calls).toEqual(["delete id-1", "observe", "write status"]);
    expect(w.obj?.metadata?.annotations?.[ANNOTATIONS.deleteRequested]).toBeUndefined();
    expect(condition(w.obj, "Ready")).toBe("Deleting");
    expect(ready(w.obj)).toMatch(
      /delete of the remote resource id-1 failed \(.*already being released\)/,
    );
    expect(finalizers(w.obj)).toEqual(["test.io/f"]);

    w.calls.length = 0;
    await reconcile(KEY, w.ctx);
    expect(w.calls).toEqual(["delete id-1", "observe"]);

    exists = false;
    w.calls.length = 0;
    expect(await reconcile(KEY, w.ctx)).toEqual({});
    expect(w.calls).toEqual(["delete id-1", "write finalizers"]);
    expect(w.obj).toBeUndefined();
  });

  it("removes the finalizer when the service refuses a delete of a resource it no longer shows", async () => {
    const w = deletedObject();
    const refusal = new ServiceRefusedError("already released", {
      endpoint: "deleteNas",
      code: 400,
      outcomeUnknown: false,
    });
    const { reconcile } = loop(
      deletable(w, "InProgress", () => false, {
        delete: async () => {
          throw refusal;
        },
      }),
    );
    expect(await reconcile(KEY, w.ctx)).toEqual({});
    expect(w.obj).toBeUndefined();
    expect(w.events).toEqual(["Normal Deleted"]);
  });

  it("asks the kind's cheap exists, not observe, while the deletion waits", async () => {
    const w = deletedObject();
    let gone = false;
    const { reconcile } = loop(
      deletable(w, "InProgress", () => true, {
        exists: async () => {
          w.calls.push("exists");
          return !gone;
        },
      }),
    );
    await reconcile(KEY, w.ctx);
    expect(w.calls).toEqual(["delete id-1", "write annotations", "exists", "write status"]);
    w.calls.length = 0;
    expect(await reconcile(KEY, w.ctx)).toEqual({ requeueAfterMs: 5_000 });
    expect(w.calls).toEqual(["exists"]);
    gone = true;
    w.calls.length = 0;
    expect(await reconcile(KEY, w.ctx)).toEqual({});
    expect(w.calls).toEqual(["exists", "write finalizers"]);
  });

  it("removes the finalizer in the same reconcile when the resource is gone right after an InProgress delete", async () => {
    const w = deletedObject();
    let deleted = false;
    const { reconcile } = loop(
      deletable(w, "InProgress", () => !deleted, {
        delete: async () => {
          deleted = true;
          return "InProgress";
        },
      }),
    );
    expect(await reconcile(KEY, w.ctx)).toEqual({});
    expect(w.obj).toBeUndefined();
  });

  it("does not delete while the kind's steps before deletion wait, and deletes once they are done", async () => {
    const w = deletedObject();
    let before: BeforeDeleteResult = { waiting: "detaching id-1 from instance i-9" };
    const { reconcile } = loop(
      deletable(w, "Deleted", () => true, {
        beforeDelete: async (_call, id) => {
          w.calls.push(`beforeDelete ${id}`);
          return before;
        },
      }),
    );
    expect(await reconcile(KEY, w.ctx)).toEqual({ requeueAfterMs: 5_000 });
    expect(w.calls).toEqual(["beforeDelete id-1", "write status"]);
    expect(condition(w.obj, "Ready")).toBe("Deleting");
    expect(condition(w.obj, "Reconciling")).toBe("Deleting");
    expect(ready(w.obj)).toBe("detaching id-1 from instance i-9");
    expect(finalizers(w.obj)).toEqual(["test.io/f"]);

    before = "Done";
    w.calls.length = 0;
    await reconcile(KEY, w.ctx);
    expect(w.calls).toEqual(["beforeDelete id-1", "delete id-1", "write finalizers"]);
    expect(w.obj).toBeUndefined();
  });

  it("hands the kind's steps before deletion its references as they resolve now", async () => {
    const w = deletedObject();
    const seen: unknown[] = [];
    const c = deletable(w, "Deleted", () => true, {
      beforeDelete: async (call) => {
        seen.push(call.refs);
        return "Done";
      },
    }) as KindClient<ManagedObject, string, { instanceId: string }>;
    const { reconcile } = loop(c, {
      resolveReferences: () => ({ resolved: true, refs: { instanceId: "i-7" } }),
    });
    await reconcile(KEY, w.ctx);
    expect(seen).toEqual([{ instanceId: "i-7" }]);
    expect(w.obj).toBeUndefined();
  });

  it("keeps the finalizer when the steps before deletion fail, saying why in Synced", async () => {
    const w = deletedObject();
    const { reconcile, onError } = loop(
      deletable(w, "Deleted", () => true, {
        beforeDelete: async () => {
          throw new ServiceUnavailableError("HTTP 503", {
            code: 503,
            endpoint: "detach",
            outcomeUnknown: false,
          });
        },
      }),
    );
    const err = await reconcile(KEY, w.ctx).catch((e: unknown) => e);
    expect(String(err)).toMatch(/cannot prepare the remote resource for deletion: HTTP 503/);
    expect(w.calls).not.toContain("delete id-1");
    await onError(KEY, err, w.ctx, w.obj);
    expect(finalizers(w.obj)).toEqual(["test.io/f"]);
    expect(condition(w.obj, "Synced")).toBe("ReconcileError");
  });

  it("keeps the finalizer with Synced=False when the observe after an InProgress delete fails", async () => {
    const w = deletedObject();
    let failing = false;
    const { reconcile, onError } = loop(
      deletable(w, "InProgress", () => true, {
        observe: async () => {
          w.calls.push("observe");
          if (failing) {
            throw new ServiceUnavailableError("HTTP 502", {
              code: 502,
              endpoint: "get",
              outcomeUnknown: false,
            });
          }
          return {
            exists: true,
            upToDate: true,
            ready: { status: "False", reason: "Unavailable", message: "" },
            remote: "r",
          };
        },
      }),
    );
    await reconcile(KEY, w.ctx);
    failing = true;
    w.calls.length = 0;
    const err = await reconcile(KEY, w.ctx).catch((e: unknown) => e);
    expect(String(err)).toMatch(/cannot observe the remote resource: HTTP 502/);
    expect(w.calls).toEqual(["observe"]);
    await onError(KEY, err, w.ctx, w.obj);
    expect(finalizers(w.obj)).toEqual(["test.io/f"]);
    expect(condition(w.obj, "Synced")).toBe("ReconcileError");
  });

  it("counts the resource gone from the list when the steps before its deletion fail with a 500 (its detail read, after an earlier delete took effect)", async () => {
    const w = deletedObject();
    let listed = ["id-2"];
    const { reconcile } = loop(
      deletable(w, "Deleted", () => false, {
        beforeDelete: async () => {
          w.calls.push("before delete");
          throw new ServiceUnavailableError("volume id-1 not found", {
            code: 500,
            endpoint: "getVolume",
            outcomeUnknown: false,
          });
        },
        listIds: async () => {
          w.calls.push("list");
          return { ids: new Set(listed), complete: true };
        },
      }),
    );
    expect(await reconcile(KEY, w.ctx)).toEqual({ requeueAfterMs: 5_000 });
    expect(condition(w.obj, "Ready")).toBe("Deleting");
    expect(ready(w.obj)).toMatch(
      /cannot prepare the remote resource for deletion \(volume id-1 not found\) and it is absent from 1 complete listing\(s\) in a row/,
    );
    w.calls.length = 0;
    expect(await reconcile(KEY, w.ctx)).toEqual({});
    expect(w.calls).toEqual(["before delete", "list", "write finalizers"]);
    expect(w.obj).toBeUndefined();
    expect(w.events).toEqual(["Normal Deleted"]);

    // Listed, the resource is there: the steps' failure is the error, nothing deleted.
    const v = deletedObject();
    listed = ["id-1"];
    const again = loop(
      deletable(v, "Deleted", () => true, {
        beforeDelete: async () => {
          throw new ServiceUnavailableError("HTTP 500", {
            code: 500,
            endpoint: "detach",
            outcomeUnknown: false,
          });
        },
        listIds: async () => ({ ids: new Set(listed), complete: true }),
      }),
    );
    const err = await again.reconcile(KEY, v.ctx).catch((e: unknown) => e);
    expect(String(err)).toMatch(/cannot prepare the remote resource for deletion: HTTP 500/);
    expect(v.calls).not.toContain("delete id-1");
    expect(finalizers(v.obj)).toEqual(["test.io/f"]);
  });

  it("counts the resource gone from the list when the read that checks its owner answers 500 (the binding never verified)", async () => {
    const w = deletedObject();
    const { reconcile } = loop(
      deletable(w, "Deleted", () => false, {
        ownerOf: () => undefined,
        observe: async () => {
          w.calls.push("observe");
          throw new ServiceUnavailableError("volume id-1 not found", {
            code: 500,
            endpoint: "get",
            outcomeUnknown: false,
          });
        },
        listIds: async () => {
          w.calls.push("list");
          return { ids: new Set(["id-2"]), complete: true };
        },
      }),
    );
    // Absent from one listing: not yet gone, the read's failure stands.
    const err = await reconcile(KEY, w.ctx).catch((e: unknown) => e);
    expect(String(err)).toMatch(/cannot observe the remote resource: volume id-1 not found/);
    expect(w.calls).not.toContain("delete id-1");
    w.calls.length = 0;
    expect(await reconcile(KEY, w.ctx)).toEqual({});
    expect(w.calls).toEqual(["observe", "list", "delete id-1", "write finalizers"]);
    expect(w.obj).toBeUndefined();
  });

  it("counts the resource gone from the list when its detail read answers 500 after an InProgress delete", async () => {
    const w = deletedObject();
    const { reconcile } = loop(
      deletable(w, "InProgress", () => true, {
        observe: async () => {
          w.calls.push("observe");
          throw new ServiceUnavailableError("HTTP 500", {
            code: 500,
            endpoint: "get",
            outcomeUnknown: false,
          });
        },
        listIds: async () => {
          w.calls.push("list");
          return { ids: new Set(["id-2"]), complete: true };
        },
      }),
    );
    expect(await reconcile(KEY, w.ctx)).toEqual({ requeueAfterMs: 5_000 });
    expect(condition(w.obj, "Ready")).toBe("Deleting");
    expect(ready(w.obj)).toMatch(/absent from 1 complete listing\(s\) in a row/);
    expect(finalizers(w.obj)).toEqual(["test.io/f"]);
    w.calls.length = 0;
    expect(await reconcile(KEY, w.ctx)).toEqual({});
    expect(w.calls).toEqual(["observe", "list", "write finalizers"]);
    expect(w.obj).toBeUndefined();
  });
});
