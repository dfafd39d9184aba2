import { describe, expect, it } from "vitest";
import type { KubeClient } from "./kube.js";
import { patchStatus } from "./object-writes.js";
import type { KubeObject, ResourceDescriptor } from "./resource.js";
import { unkeptStatusFields } from "./status-not-kept.js";

const RES: ResourceDescriptor = {
  group: "aidc.io",
  version: "v1alpha1",
  plural: "widgets",
  kind: "Widget",
  namespaced: true,
};

/** A client whose status writes are answered with `remoteStatus` rewritten while `rewriting`. */
function admission() {
  const sent: unknown[] = [];
  const state = { rewriting: true };
  const kube = {
    async patch(_res: unknown, _key: unknown, body: { status: Record<string, unknown> }) {
      sent.push(body.status);
      const status = { ...body.status, ...(state.rewriting ? { remoteStatus: "rewritten" } : {}) };
      return { ...obj(1), status } as KubeObject;
    },
  } as unknown as KubeClient;
  return { kube, sent, state };
}

const obj = (generation: number, status?: Record<string, unknown>): KubeObject => ({
  metadata: { name: "w", namespace: "ns", uid: `uid-${Math.random()}`, generation },
  ...(status ? { status } : {}),
});

describe("status writes admission changes", () => {
  it("are sent once per generation and status, said once, and sent again once kept", async () => {
    const { kube, sent, state } = admission();
    const first = obj(1);
    const desired = { remoteStatus: "Running", phase: "Ready" };
    const a = await patchStatus(kube, RES, first, desired);
    expect(a.notKept).toMatch(/does not show status\.remoteStatus as written/);
    // The next poll reads what admission left and computes the same status: nothing sent.
    const read = { ...first, status: a.object.status };
    expect(await patchStatus(kube, RES, read, desired)).toEqual({ written: false, object: read });
    expect(sent).toHaveLength(1);
    // Another status is written; the same field not kept is not said again.
    const b = await patchStatus(kube, RES, read, { ...desired, phase: "Scaling" });
    expect([b.written, b.notKept]).toEqual([true, undefined]);
    // A new generation writes the status again, and says so again.
    const next = { ...read, metadata: { ...read.metadata, generation: 2 } };
    expect((await patchStatus(kube, RES, next, desired)).notKept).toBeDefined();
    expect(sent).toHaveLength(3);
    // Kept once the webhook goes: a later change of the same write is sent as usual.
    state.rewriting = false;
    await patchStatus(kube, RES, next, { ...desired, phase: "Scaling" });
    await patchStatus(kube, RES, next, desired);
    expect(sent).toHaveLength(5);
  });

  it("name the fields the answer does not show, conditions by type", () => {
    const ready = { type: "Ready", status: "True" };
    const synced = { type: "Synced", status: "True" };
    expect(
      unkeptStatusFields(
        { phase: "Ready", conditions: [ready, synced], size: 1 },
        { phase: "Ready", conditions: [ready, { ...synced, status: "False" }], extra: "x" },
      ),
    ).toEqual(["status.conditions[Synced]", "status.size", "status.extra"]);
  });
});
