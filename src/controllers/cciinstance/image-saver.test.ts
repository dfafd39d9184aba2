import { describe, expect, it } from "vitest";
import { cciInstanceCrd } from "../../crds/cciinstance.js";
import { KubeApiError, type ReconcileContext } from "../../runtime/index.js";
import { ServiceRefusedError, ServiceUnavailableError } from "../../service/errors.js";
import { saveImages } from "./image-saver.js";
import { IMAGES_ANNOTATION, parseLedger } from "./images.js";
import type { CciObject } from "./objects.js";

const now = new Date("2026-01-01T12:00:00.000Z");
const image = { imageName: "team/a", tag: "v1" };

function object(annotations: Record<string, string> = {}, rv = "1"): CciObject {
  return {
    apiVersion: "aidc.io/v1alpha1",
    kind: "CciInstance",
    metadata: { name: "x", namespace: "ns", resourceVersion: rv, annotations },
    spec: { instanceId: "cci-1", images: [image] },
  };
}

/** A fake API server holding one object, optionally refusing the first `conflicts` patches. */
function fakeKube(start: CciObject, conflicts = 0) {
  let stored = start;
  let refuse = conflicts;
  const writes: string[] = [];
  const kube = {
    writes,
    current: () => stored,
    async patch(
      _res: unknown,
      _key: unknown,
      body: { metadata: { resourceVersion?: string; annotations: Record<string, string> } },
    ) {
      if (refuse > 0 || body.metadata.resourceVersion !== stored.metadata.resourceVersion) {
        refuse = Math.max(0, refuse - 1);
        throw new KubeApiError("PATCH", "/x", 409, { reason: "Conflict", message: "changed" });
      }
      const value = body.metadata.annotations[IMAGES_ANNOTATION] ?? "";
      writes.push(value);
      stored = {
        ...stored,
        metadata: {
          ...stored.metadata,
          resourceVersion: String(Number(stored.metadata.resourceVersion) + 1),
          annotations: { ...stored.metadata.annotations, ...body.metadata.annotations },
        },
      };
      return stored;
    },
    async get() {
      return stored;
    },
    /** Someone else changes the object (a new resourceVersion). */
    touch() {
      stored = { ...stored, metadata: { ...stored.metadata, resourceVersion: "99" } };
    },
  };
  return kube;
}

function context(kube: ReturnType<typeof fakeKube>): ReconcileContext {
  const events: string[] = [];
  return {
    kube,
    clock: { now: () => now },
    events: {
      normal: (_o: unknown, r: string) => events.push(r),
      warning: (_o: unknown, r: string) => events.push(r),
    },
  } as unknown as ReconcileContext;
}

function run(
  kube: ReturnType<typeof fakeKube>,
  obj: CciObject,
  save: () => Promise<{ imageId: string }>,
) {
  const calls: string[] = [];
  return {
    calls,
    result: saveImages({
      ctx: context(kube),
      obj,
      resource: cciInstanceCrd,
      instanceId: "cci-1",
      images: [image],
      ledger: parseLedger(obj.metadata.annotations?.[IMAGES_ANNOTATION]),
      instance: { status: "RUNNING", saveImageStatus: false, observedAt: now },
      service: {
        saveImage: async (id) => {
          calls.push(id);
          return save();
        },
      },
      backoff: { baseMs: 1_000, maxMs: 10_000 },
    }),
  };
}

describe("saveImages", () => {
  it("writes the marker before the call and the image id after it", async () => {
    const kube = fakeKube(object());
    const { result, calls } = run(kube, kube.current(), async () => ({ imageId: "img-1" }));
    const got = await result;
    expect(calls).toEqual(["cci-1"]);
    expect(kube.writes.map((w) => parseLedger(w)?.["team/a:v1"])).toEqual([
      { at: now.toISOString(), attempts: 1 },
      { at: now.toISOString(), attempts: 1, imageId: "img-1" },
    ]);
    // The list has not been walked since the request: Saving, not yet Saved.
    expect(got.statuses[0]).toMatchObject({ state: "Saving", imageId: "img-1" });
  });

  it("sends nothing when the object changed since the decision (a stale cache)", async () => {
    const kube = fakeKube(object());
    const stale = kube.current();
    kube.touch();
    const { result, calls } = run(kube, stale, async () => ({ imageId: "img-1" }));
    await expect(result).rejects.toMatchObject({ name: "ConflictError" });
    expect(calls).toEqual([]);
  });

  it("records a refused save as failed, to be retried with backoff", async () => {
    const kube = fakeKube(object());
    const refused = new ServiceRefusedError("refused: busy", {
      endpoint: "saveCciImage",
      code: 409,
    });
    const { result } = run(kube, kube.current(), () => Promise.reject(refused));
    const got = await result;
    expect(parseLedger(kube.writes.at(-1))?.["team/a:v1"]).toMatchObject({
      failed: "refused: busy",
    });
    expect(got.statuses[0]?.message).toMatch(/attempt 1 failed: refused: busy; next attempt at/);
  });

  it("records a save that failed after it was sent as an unknown outcome, never as failed", async () => {
    const kube = fakeKube(object());
    const lost = new ServiceUnavailableError("timed out", {
      endpoint: "saveCciImage",
      code: undefined,
      outcomeUnknown: true,
    });
    const { result } = run(kube, kube.current(), () => Promise.reject(lost));
    const got = await result;
    const entry = parseLedger(kube.writes.at(-1))?.["team/a:v1"];
    expect(entry).toMatchObject({ unknown: "timed out" });
    expect(entry?.failed).toBeUndefined();
    expect(got.condition?.reason).toBe("SaveOutcomeUnknown");
  });

  it("keeps the image id when the object was edited during the call", async () => {
    const kube = fakeKube(object());
    const { result } = run(kube, kube.current(), async () => {
      kube.touch();
      return { imageId: "img-7" };
    });
    await result;
    expect(parseLedger(kube.current().metadata.annotations?.[IMAGES_ANNOTATION])).toEqual({
      "team/a:v1": { at: now.toISOString(), attempts: 1, imageId: "img-7" },
    });
  });

  it("saves nothing while the ledger annotation is unreadable", async () => {
    const kube = fakeKube(object({ [IMAGES_ANNOTATION]: "{broken" }));
    const { result, calls } = run(kube, kube.current(), async () => ({ imageId: "img-1" }));
    const got = await result;
    expect(calls).toEqual([]);
    expect(kube.writes).toEqual([]);
    expect(got.condition?.reason).toBe("SaveOutcomeUnknown");
  });
});
