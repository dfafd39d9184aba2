import { describe, expect, it } from "vitest";
import { client, condition, KEY, loop, world } from "../../../test/support/managed-world.js";
import type { KubeObject } from "../../runtime/resource.js";
import { type ManagedObject, type ReferenceResolution, referenceReader } from "./call.js";
import { ANNOTATIONS } from "./decisions.js";

type Refs = { storageId: string };

const waiting: ReferenceResolution<Refs> = {
  resolved: false,
  reason: "NasVolumeNotReady",
  message: "NasVolume data is not Ready yet",
};
const resolved: ReferenceResolution<Refs> = { resolved: true, refs: { storageId: "s-1" } };

const statusOf = (o: KubeObject | undefined, type: string) =>
  (o?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions?.find(
    (c) => c.type === type,
  )?.status;

describe("the reference resolution step", () => {
  it("orders nothing while a reference does not resolve, then creates with the resolved references", async () => {
    const w = world({});
    let answer: ReferenceResolution<Refs> = waiting;
    const seen: unknown[] = [];
    const c = client(() => w, {
      preflight: async (call) => {
        seen.push(call.refs);
        return undefined;
      },
    });
    const create = c.create.bind(c);
    c.create = async (call, token) => {
      seen.push(call.refs);
      return create(call, token);
    };
    const { reconcile } = loop<Refs>(c, { resolveReferences: () => answer });
    expect(await reconcile(KEY, w.ctx)).toEqual({});
    expect(w.calls).toEqual(["write status"]);
    expect(w.obj?.metadata?.annotations?.[ANNOTATIONS.createPending]).toBeUndefined();
    expect(condition(w.obj, "ReferencesResolved")).toBe("NasVolumeNotReady");
    expect(statusOf(w.obj, "ReferencesResolved")).toBe("False");
    expect(condition(w.obj, "Ready")).toBe("NasVolumeNotReady");
    expect(condition(w.obj, "Synced")).toBe("NasVolumeNotReady");
    expect(w.events).toEqual(["Normal NasVolumeNotReady"]);
    answer = resolved;
    await reconcile(KEY, w.ctx);
    expect(seen).toEqual([{ storageId: "s-1" }, { storageId: "s-1" }]);
    expect(w.calls).toContain("create (pending recorded)");
    expect(condition(w.obj, "ReferencesResolved")).toBe("Resolved");
    expect(statusOf(w.obj, "ReferencesResolved")).toBe("True");
  });

  it("still observes a bound resource whose references do not resolve, but sends no update", async () => {
    const w = world({}, { [ANNOTATIONS.externalId]: "id-1" });
    const updates: unknown[] = [];
    const { reconcile } = loop<Refs>(
      client(() => w, {
        observe: async (call) => {
          w.calls.push(`observe refs=${JSON.stringify(call.refs)}`);
          return {
            exists: true,
            upToDate: false,
            ready: { status: "True", reason: "Available", message: "" },
            remote: "r",
          };
        },
        update: async (call) => {
          updates.push(call.refs);
          return { outcome: "Applied", message: "sent" };
        },
      }),
      { resolveReferences: () => waiting },
    );
    await reconcile(KEY, w.ctx);
    expect(w.calls.filter((c) => c.startsWith("observe"))).toEqual(["observe refs=undefined"]);
    expect(updates).toEqual([]);
    expect(condition(w.obj, "Ready")).toBe("Available");
    expect(condition(w.obj, "Synced")).toBe("NasVolumeNotReady");
    expect(condition(w.obj, "ReferencesResolved")).toBe("NasVolumeNotReady");
  });

  it("passes the references to update once they resolve", async () => {
    const w = world({}, { [ANNOTATIONS.externalId]: "id-1" });
    const updates: unknown[] = [];
    const { reconcile } = loop<Refs>(
      client(() => w, {
        observe: async () => ({
          exists: true,
          upToDate: updates.length > 0,
          ready: { status: "True", reason: "Available", message: "" },
          remote: "r",
        }),
        update: async (call) => {
          updates.push(call.refs);
          return { outcome: "Applied", message: "sent" };
        },
      }),
      { resolveReferences: () => resolved },
    );
    await reconcile(KEY, w.ctx);
    expect(updates).toEqual([{ storageId: "s-1" }]);
    expect(condition(w.obj, "Synced")).toBe("ReconcileSuccess");
  });

  it("does not resolve create-only references of a bound object: ReferencesResolved stays True", async () => {
    const w = world({}, { [ANNOTATIONS.externalId]: "id-1" });
    let asked = 0;
    const { reconcile } = loop<Refs>(
      client(() => w),
      {
        resolveReferences: () => {
          asked += 1;
          return waiting;
        },
        referencesForCreateOnly: true,
      },
    );
    await reconcile(KEY, w.ctx);
    expect(asked).toBe(0);
    expect(condition(w.obj, "ReferencesResolved")).toBe("Resolved");
    expect(condition(w.obj, "Synced")).toBe("ReconcileSuccess");
  });

  it("writes no ReferencesResolved for a kind without the step", async () => {
    const w = world({}, { [ANNOTATIONS.externalId]: "id-1" });
    const { reconcile } = loop(client(() => w));
    await reconcile(KEY, w.ctx);
    expect(condition(w.obj, "ReferencesResolved")).toBeUndefined();
  });
});

describe("referenceReader", () => {
  it("reads only the object's own namespace", () => {
    const asked: unknown[] = [];
    const cache = {
      get: (_res: unknown, key: unknown) => {
        asked.push(key);
        return undefined;
      },
      list: (_res: unknown, ns?: string) => {
        asked.push(ns);
        return [];
      },
      byIndex: () => [],
    };
    const read = referenceReader(cache, "team-a", false);
    const res = { group: "g", version: "v1", plural: "xs", kind: "X", namespaced: true };
    read.get<ManagedObject>(res, "x");
    read.list(res);
    expect(asked).toEqual([{ namespace: "team-a", name: "x" }, "team-a"]);
  });
});
