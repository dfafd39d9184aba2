import { describe, expect, it } from "vitest";
import { client, KEY, loop, world } from "../../../test/support/managed-world.js";
import { ANNOTATIONS } from "./decisions.js";

describe("LateInitialize", () => {
  it("writes the fields it fills with the resourceVersion it read, so a spec changed meanwhile is refused, not overwritten", async () => {
    const w = world({}, { [ANNOTATIONS.externalId]: "id-1" });
    w.set((o) => ({ ...o, metadata: { ...o.metadata, finalizers: ["test.io/f"] } }));
    const kube = w.ctx.kube as unknown as {
      patch: (res: unknown, key: unknown, body: { spec?: unknown }) => Promise<unknown>;
    };
    const send = kube.patch;
    const specWrites: unknown[] = [];
    kube.patch = async (res, key, body) => {
      if (body.spec !== undefined) specWrites.push(body);
      return send(res, key, body);
    };
    const read = w.obj?.metadata?.resourceVersion;
    const { reconcile } = loop(
      client(() => w),
      { lateInitialize: () => ({ size: 5 }) },
    );
    await reconcile(KEY, w.ctx);
    expect(specWrites).toEqual([{ metadata: { resourceVersion: read }, spec: { size: 5 } }]);
    expect(w.obj?.spec).toEqual({ size: 5 });
    expect(w.events).toContain("Normal LateInitialized");
  });
});
