import { describe, expect, it } from "vitest";
import { WriteNotKeptError } from "./errors.js";
import type { KubeClient } from "./kube.js";
import { ensureFinalizer, patchSpec, removeFinalizer } from "./lifecycle-writes.js";
import { setAnnotations } from "./object-writes.js";
import type { KubeObject, ResourceDescriptor } from "./resource.js";

const RES: ResourceDescriptor = {
  group: "example.io",
  version: "v1",
  plural: "widgets",
  kind: "Widget",
  namespaced: true,
};

/**
 * A client whose API server applies each merge patch of metadata (and of the spec's top
 * fields), then lets `admit`
 * change the result, as a mutating admission webhook does; `patches` records the bodies.
 */
function admittingKube(obj: KubeObject, admit: (o: KubeObject) => KubeObject) {
  let current = structuredClone(obj);
  const patches: unknown[] = [];
  const kube = {
    patch: async (
      _res: ResourceDescriptor,
      _key: unknown,
      body: { metadata: KubeObject["metadata"]; spec?: Record<string, unknown> },
    ) => {
      patches.push(body);
      const { resourceVersion: _rv, annotations, ...rest } = body.metadata ?? {};
      const merged = { ...(current.metadata?.annotations ?? {}) };
      for (const [k, v] of Object.entries(annotations ?? {})) {
        if (v === null) delete merged[k];
        else merged[k] = v as string;
      }
      const rv = String(Number(current.metadata?.resourceVersion ?? "0") + 1);
      const spec = { ...(current.spec as object | undefined), ...body.spec };
      current = admit({
        ...current,
        metadata: { ...current.metadata, ...rest, annotations: merged, resourceVersion: rv },
        ...(body.spec ? { spec } : {}),
      });
      return structuredClone(current);
    },
    get: async () => structuredClone(current),
  } as unknown as KubeClient;
  return { kube, patches, current: () => current };
}

const widget: KubeObject = {
  metadata: {
    name: "w",
    namespace: "ns",
    resourceVersion: "1",
    annotations: { "example.io/marker": "m1" },
  },
};

describe("writes an admission webhook changes", () => {
  it("setAnnotations: an answer without an annotation it set is WriteNotKept, and what it removed is written back", async () => {
    const stripId = (o: KubeObject) => {
      const { "example.io/id": _id, ...rest } = o.metadata?.annotations ?? {};
      return { ...o, metadata: { ...o.metadata, annotations: rest } };
    };
    const { kube, current } = admittingKube(widget, stripId);
    const write = setAnnotations(kube, RES, widget, {
      "example.io/id": "id-1",
      "example.io/marker": null,
    });
    await expect(write).rejects.toBeInstanceOf(WriteNotKeptError);
    await expect(write).rejects.toThrow(
      "its answer does not show annotation example.io/id as written",
    );
    // Without a kubectl command that fails where mutatingadmissionpolicies is not served.
    await expect(write).rejects.toThrow(
      "(kubectl get mutatingwebhookconfigurations; from Kubernetes 1.36 also mutatingadmissionpolicies)",
    );
    expect(current().metadata?.annotations).toEqual({ "example.io/marker": "m1" });
  });

  it("setAnnotations: a write-back admission drops too is sent again until its answer shows it", async () => {
    let writes = 0;
    // Strips what each of the first three writes adds or changes: the id, then the marker twice.
    const { kube, patches, current } = admittingKube(widget, (o) => {
      if (++writes > 3) return o;
      const annotations = { ...o.metadata?.annotations };
      delete annotations[writes === 1 ? "example.io/id" : "example.io/marker"];
      return { ...o, metadata: { ...o.metadata, annotations } };
    });
    await expect(
      setAnnotations(kube, RES, widget, { "example.io/id": "id-1", "example.io/marker": null }),
    ).rejects.toBeInstanceOf(WriteNotKeptError);
    expect(patches).toHaveLength(4);
    expect(current().metadata?.annotations).toEqual({ "example.io/marker": "m1" });
  });

  it("setAnnotations: an answer without the finalizer it added is WriteNotKept", async () => {
    const noFinalizers = (o: KubeObject) => ({ ...o, metadata: { ...o.metadata, finalizers: [] } });
    const { kube } = admittingKube(widget, noFinalizers);
    await expect(
      setAnnotations(
        kube,
        RES,
        widget,
        { "example.io/marker": "m2" },
        { finalizer: "example.io/f" },
      ),
    ).rejects.toThrow("its answer does not show finalizer example.io/f as written");
  });

  it("ensureFinalizer and removeFinalizer: an answer that does not show the change is WriteNotKept", async () => {
    const { kube } = admittingKube(widget, (o) => ({
      ...o,
      metadata: { ...o.metadata, finalizers: ["other.io/f"] },
    }));
    await expect(ensureFinalizer(kube, RES, widget, "example.io/f")).rejects.toBeInstanceOf(
      WriteNotKeptError,
    );
    const kept = admittingKube(widget, (o) => ({
      ...o,
      metadata: { ...o.metadata, finalizers: ["example.io/f"] },
    }));
    const withFinalizer = {
      ...widget,
      metadata: { ...widget.metadata, finalizers: ["example.io/f"] },
    };
    await expect(removeFinalizer(kept.kube, RES, withFinalizer, "example.io/f")).rejects.toThrow(
      "its answer does not show finalizers [] as written",
    );
  });

  it("patchSpec: an answer without a field it filled is WriteNotKept; one with it, keys in any order, is kept", async () => {
    const { kube } = admittingKube(widget, (o) => {
      const { mountPath: _dropped, ...spec } = o.spec as Record<string, unknown>;
      return { ...o, spec };
    });
    const fields = { mountPath: "/m", size: 1 };
    await expect(patchSpec(kube, RES, widget, fields)).rejects.toThrow(
      "its answer does not show spec.mountPath as written",
    );
    const kept = admittingKube(widget, (o) => ({ ...o, spec: { limits: { b: 2, a: 1 } } }));
    const out = await patchSpec(kept.kube, RES, widget, { limits: { a: 1, b: 2 } });
    expect(out.spec).toEqual({ limits: { a: 1, b: 2 } });
  });

  it("a write kept as sent answers the object", async () => {
    const { kube, patches } = admittingKube(widget, (o) => o);
    const out = await setAnnotations(kube, RES, widget, { "example.io/id": "id-1" });
    expect(out.metadata?.annotations?.["example.io/id"]).toBe("id-1");
    expect(patches).toHaveLength(1);
  });
});
