/**
 * The first read of a resource just bound runs while its id is written (observe.ts,
 * readWhileBinding): one Kubernetes round trip less before Ready, and nothing after the
 * read (status, an update) goes before the id is written.
 */
import { describe, expect, it } from "vitest";
import { client, KEY, loop, world } from "../../../test/support/managed-world.js";
import { ANNOTATIONS } from "./decisions.js";

/** The world's kube with the id write (`aidc.io/external-id`) held or failed on demand. */
function holdIdWrite(w: ReturnType<typeof world>) {
  const kube = w.ctx.kube as unknown as {
    patch: (res: unknown, key: unknown, body: { metadata?: { annotations?: object } }) => unknown;
  };
  const patch = kube.patch;
  let release: () => void = () => undefined;
  const released = new Promise<void>((r) => {
    release = r;
  });
  let fail = false;
  kube.patch = async (res, key, body) => {
    const idWrite = Boolean(
      body.metadata?.annotations && ANNOTATIONS.externalId in body.metadata.annotations,
    );
    if (!idWrite) return patch(res, key, body);
    w.calls.push("id write sent");
    await released;
    if (fail) {
      fail = false;
      throw new Error("the API server went away");
    }
    return patch(res, key, body);
  };
  return {
    release,
    failIt: () => {
      fail = true;
      release();
    },
  };
}

describe("the read of a resource just bound", () => {
  it("runs while the id is written, and the status follows the id write", async () => {
    const w = world({});
    const held = holdIdWrite(w);
    const observed = new Promise<void>((resolve) => {
      const { reconcile } = loop(
        client(() => w, {
          observe: async () => {
            w.calls.push("observe");
            resolve();
            return {
              exists: true,
              upToDate: true,
              ready: { status: "True", reason: "Available", message: "" },
              remote: "r",
            };
          },
        }),
      );
      void reconcile(KEY, w.ctx).then(() => w.calls.push("done"));
    });
    // The read happened although the id write has no answer yet.
    await observed;
    expect(w.calls).toEqual([
      "write annotations,finalizers",
      "create (pending recorded)",
      "poll",
      "id write sent",
      "observe",
    ]);
    held.release();
    await expect.poll(() => w.calls.at(-1)).toBe("done");
    expect(w.calls.slice(4)).toEqual(["observe", "write annotations", "write status", "done"]);
    expect(w.obj?.metadata?.annotations?.[ANNOTATIONS.externalId]).toBe("id-1");
    expect(w.events).toEqual(["Normal Created"]);
  });

  it("writes no status when the id write fails: the pending marker stays, and its token finds the resource", async () => {
    const w = world({});
    const held = holdIdWrite(w);
    const { reconcile } = loop(
      client(() => w, {
        lookupByToken: async () => {
          w.calls.push("lookup");
          return ["id-1"];
        },
      }),
    );
    const first = reconcile(KEY, w.ctx);
    await expect.poll(() => w.calls.includes("observe")).toBe(true);
    held.failIt();
    await expect(first).rejects.toThrow(/went away/);
    expect(w.calls).not.toContain("write status");
    expect(w.obj?.metadata?.annotations?.[ANNOTATIONS.externalId]).toBeUndefined();
    expect(w.obj?.metadata?.annotations?.[ANNOTATIONS.createPending]).toBeDefined();
    // The order stands, unbound: told as requested, not created.
    expect(w.events).toEqual(["Normal CreateRequested"]);

    // The next reconcile (or the next operator, after a crash) finds it: never a second create.
    await reconcile(KEY, w.ctx);
    expect(w.calls.filter((c) => c.startsWith("create"))).toHaveLength(1);
    expect(w.calls).toContain("lookup");
    expect(w.obj?.metadata?.annotations?.[ANNOTATIONS.externalId]).toBe("id-1");
    expect(w.obj?.metadata?.annotations?.[ANNOTATIONS.createPending]).toBeDefined();
  });
});
