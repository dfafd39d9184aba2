import * as k8s from "@kubernetes/client-node";
import { beforeAll, describe, expect, it } from "vitest";
import { ConflictError } from "../../src/runtime/errors.js";
import { EventRecorder } from "../../src/runtime/events.js";
import { KubeClient } from "../../src/runtime/kube.js";
import type { KubeRequestInfo } from "../../src/runtime/kube-options.js";
import { ensureFinalizer, removeFinalizer } from "../../src/runtime/lifecycle-writes.js";
import {
  hasFinalizer,
  patchStatus,
  setAnnotations,
  setCondition,
} from "../../src/runtime/object-writes.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { GIZMOS, gizmo, installGizmoCrd } from "../support/test-crd.js";

describe("object writes against a real API server", () => {
  const kc = adminKubeConfig();
  const requests: KubeRequestInfo[] = [];
  const kube = new KubeClient(kc, { onRequest: (r) => requests.push(r) });
  let namespace = "";

  beforeAll(async () => {
    await installGizmoCrd(kc);
    namespace = await createNamespace(kc, "runtime-writes");
  });

  const create = (name: string) =>
    kube.create<KubeObject>(GIZMOS, gizmo(namespace, name, { size: 1 }));
  const statusWrites = () =>
    requests.filter((r) => r.method === "PATCH" && r.path.endsWith("/status")).length;

  it("writes a changed status once and sends nothing when the status is unchanged", async () => {
    const obj = await create("status-once");
    const now = new Date("2026-01-01T00:00:00Z");
    const status = {
      phase: "Ready",
      conditions: setCondition(
        undefined,
        { type: "Ready", status: "True", reason: "Running", message: "" },
        1,
        now,
      ),
    };
    const before = statusWrites();
    const first = await patchStatus(kube, GIZMOS, obj, status);
    expect(first.written).toBe(true);
    expect(first.object.status).toEqual(status);

    // Recomputed from the new object with the same inputs: equal, so no request.
    const again = {
      phase: "Ready",
      conditions: setCondition(
        (first.object.status as { conditions: never }).conditions,
        { type: "Ready", status: "True", reason: "Running", message: "" },
        1,
        new Date("2026-01-01T01:00:00Z"),
      ),
      ignored: undefined,
    };
    const second = await patchStatus(kube, GIZMOS, first.object, again);
    expect(second.written).toBe(false);
    expect(statusWrites() - before).toBe(1);
    const read = await kube.get(GIZMOS, { namespace, name: "status-once" });
    expect(read?.metadata?.resourceVersion).toBe(first.object.metadata?.resourceVersion);
  });

  it("removes status fields that are no longer computed", async () => {
    const obj = await create("status-shrink");
    const full = await patchStatus(kube, GIZMOS, obj, {
      phase: "A",
      detail: { x: 1, y: 2 },
      extra: "e",
    });
    const shrunk = await patchStatus(kube, GIZMOS, full.object, { phase: "B", detail: { x: 1 } });
    expect(shrunk.object.status).toEqual({ phase: "B", detail: { x: 1 } });
  });

  it("refuses a status computed from a stale object with a ConflictError", async () => {
    const obj = await create("status-stale");
    await kube.patch(
      GIZMOS,
      { namespace, name: "status-stale" },
      { metadata: { labels: { touched: "yes" } } },
    );
    await expect(patchStatus(kube, GIZMOS, obj, { phase: "X" })).rejects.toBeInstanceOf(
      ConflictError,
    );
  });

  it("fails an annotation write on a concurrent change and applies it on a fresh object", async () => {
    const obj = await create("annotations");
    await kube.patch(
      GIZMOS,
      { namespace, name: "annotations" },
      { metadata: { labels: { other: "writer" } } },
    );
    await expect(
      setAnnotations(kube, GIZMOS, obj, { "aidc.io/create-pending": "x" }),
    ).rejects.toBeInstanceOf(ConflictError);
    const fresh = (await kube.get(GIZMOS, { namespace, name: "annotations" })) as KubeObject;
    const written = await setAnnotations(kube, GIZMOS, fresh, { "aidc.io/create-pending": "x" });
    expect(written.metadata?.annotations?.["aidc.io/create-pending"]).toBe("x");
    const removed = await setAnnotations(kube, GIZMOS, written, { "aidc.io/create-pending": null });
    expect(removed.metadata?.annotations?.["aidc.io/create-pending"]).toBeUndefined();
  });

  it("adds finalizers from many concurrent writers holding the same stale object without losing any", async () => {
    const obj = await create("finalizers");
    const names = Array.from({ length: 5 }, (_, i) => `test.aidc.io/f${i}`);
    // Every writer starts from the same (soon stale) object, while labels change too.
    await Promise.all([
      ...names.map((f) => ensureFinalizer(kube, GIZMOS, obj, f)),
      kube.patch(GIZMOS, { namespace, name: "finalizers" }, { metadata: { labels: { l: "1" } } }),
    ]);
    const after = (await kube.get(GIZMOS, { namespace, name: "finalizers" })) as KubeObject;
    expect([...(after.metadata?.finalizers ?? [])].sort()).toEqual(names);
    expect(after.metadata?.labels?.l).toBe("1");

    const [first, ...rest] = names;
    await Promise.all([
      removeFinalizer(kube, GIZMOS, after, first as string),
      ensureFinalizer(kube, GIZMOS, after, "test.aidc.io/late"),
    ]);
    const final = (await kube.get(GIZMOS, { namespace, name: "finalizers" })) as KubeObject;
    expect([...(final.metadata?.finalizers ?? [])].sort()).toEqual(
      [...rest, "test.aidc.io/late"].sort(),
    );
    expect(await ensureFinalizer(kube, GIZMOS, final, "test.aidc.io/late")).toBe(final);
  });

  it("knows the watch echo of its own writes and not a change made by another client", async () => {
    const obj = await create("own-writes");
    expect(kube.isOwnWrite(GIZMOS, obj)).toBe(true);
    const annotated = await setAnnotations(kube, GIZMOS, obj, { "aidc.io/x": "1" });
    const statused = await patchStatus(kube, GIZMOS, annotated, { phase: "A" });
    expect(kube.isOwnWrite(GIZMOS, annotated)).toBe(true);
    expect(kube.isOwnWrite(GIZMOS, statused.object)).toBe(true);
    // The same object as the server has it now, read back: still ours.
    const read = await kube.get(GIZMOS, { namespace, name: "own-writes" });
    expect(read && kube.isOwnWrite(GIZMOS, read)).toBe(true);
    const other = new KubeClient(kc);
    const theirs = await setAnnotations(other, GIZMOS, statused.object, { "aidc.io/x": "2" });
    expect(kube.isOwnWrite(GIZMOS, theirs)).toBe(false);
    expect(other.isOwnWrite(GIZMOS, theirs)).toBe(true);
    // A watch that lags a dozen writes behind (four refused creates of three writes
    // each) still sees the first of them as this process's own.
    let latest = theirs;
    const mine: KubeObject[] = [];
    for (let i = 0; i < 12; i++) {
      latest = await setAnnotations(kube, GIZMOS, latest, { "aidc.io/x": `w${i}` });
      mine.push(latest);
    }
    expect(mine.every((o) => kube.isOwnWrite(GIZMOS, o))).toBe(true);
    // A client told to remember nothing (the Event recorder's) knows none of its writes.
    const forgetful = new KubeClient(kc, { rememberWrites: false });
    const forgotten = await setAnnotations(forgetful, GIZMOS, latest, { "aidc.io/x": "3" });
    expect(forgetful.isOwnWrite(GIZMOS, forgotten)).toBe(false);
    expect(
      forgetful.isOwnWrite(
        GIZMOS,
        await forgetful.create(GIZMOS, gizmo(namespace, "own-writes-2", { size: 1 })),
      ),
    ).toBe(false);
  });

  it("lets a deleted object go when its last finalizer is removed", async () => {
    const obj = await create("deleting");
    const held = (await ensureFinalizer(kube, GIZMOS, obj, "test.aidc.io/hold")) as KubeObject;
    await kube.delete(GIZMOS, { namespace, name: "deleting" });
    const terminating = (await kube.get(GIZMOS, { namespace, name: "deleting" })) as KubeObject;
    expect(terminating.metadata?.deletionTimestamp).toBeTruthy();
    expect(hasFinalizer(held, "test.aidc.io/hold")).toBe(true);
    // Removing it from the stale (pre-deletion) object still works, by re-reading on conflict.
    await expect(removeFinalizer(kube, GIZMOS, held, "test.aidc.io/hold")).resolves.toBeUndefined();
    await eventually(
      async () => (await kube.get(GIZMOS, { namespace, name: "deleting" })) === undefined,
    );
  });

  it("deletes by uid only the object it read: a replacement of that name stays", async () => {
    const first = await create("replaced");
    await kube.delete(GIZMOS, { namespace, name: "replaced" });
    await eventually(
      async () => (await kube.get(GIZMOS, { namespace, name: "replaced" })) === undefined,
    );
    const second = await create("replaced");
    const key = { namespace, name: "replaced" };
    await expect(kube.delete(GIZMOS, key, first.metadata?.uid)).resolves.toBe(false);
    expect((await kube.get<KubeObject>(GIZMOS, key))?.metadata?.uid).toBe(second.metadata?.uid);
    await expect(kube.delete(GIZMOS, key, second.metadata?.uid)).resolves.toBe(true);
  });

  it("records an event once and counts its repeats into a series", async () => {
    const obj = await create("evented");
    const recorder = new EventRecorder(kube, {
      controller: "aidc.io/test",
      instance: "test-1",
      seriesUpdateMs: 0,
    });
    recorder.warning(obj, "ServiceUnavailable", "the service answered 503");
    await recorder.flush();
    recorder.warning(obj, "ServiceUnavailable", "the service answered 503");
    recorder.warning(obj, "ServiceUnavailable", "the service answered 503");
    recorder.normal(obj, "Created", "created remote resource");
    await recorder.flush();
    const events = await kc.makeApiClient(k8s.EventsV1Api).listNamespacedEvent({ namespace });
    const mine = events.items.filter((e) => e.regarding?.name === "evented");
    const warning = mine.find((e) => e.reason === "ServiceUnavailable");
    expect(mine).toHaveLength(2);
    expect(warning?.type).toBe("Warning");
    expect(warning?.series?.count).toBe(3);
    expect(warning?.regarding?.uid).toBe(obj.metadata?.uid);
  });
});
