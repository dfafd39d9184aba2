/**
 * The CciInstance controller after a crash or a restore: what the annotations record
 * decides, so that an image is never saved twice and a binding is kept.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cciInstanceController } from "../../src/controllers/cciinstance/controller.js";
import { IMAGES_ANNOTATION } from "../../src/controllers/cciinstance/images.js";
import type { CciInstance, CciInstanceSpec } from "../../src/crds/cciinstance.js";
import { cciInstanceCrd } from "../../src/crds/cciinstance.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";

const POLL_MS = 500;

describe("CciInstance controller after a crash or a restore", () => {
  let op: TestOperator;
  let ns: string;

  beforeAll(async () => {
    ns = await createNamespace(adminKubeConfig(), "cci-recovery");
    op = await startTestOperator({
      controllers: [cciInstanceController],
      namespaces: [ns],
      pollIntervalMs: POLL_MS,
    });
    await op.admin.seed({
      cci: [
        { id: "dup-1", name: "same-name" },
        { id: "crash-1", name: "crashed-during-save" },
      ],
    });
  });

  afterAll(async () => {
    await op?.stop();
  });

  const create = (name: string, spec: CciInstanceSpec, annotations: Record<string, string>) =>
    op.kube.create(cciInstanceCrd, {
      metadata: { name, namespace: ns, annotations },
      spec,
    });
  const read = (name: string) =>
    op.kube.get<CciInstance & { [k: string]: unknown }>(cciInstanceCrd, {
      namespace: ns,
      name,
    });

  it("binds a restored object to its recorded instance and saves none of its saved images again", async () => {
    // A second instance of the same name appeared since: the name alone is ambiguous now.
    await op.admin.seed({ cci: [{ id: "dup-2", name: "same-name" }] });
    const since = (await op.admin.requests()).at(-1)?.seq ?? 0;
    await create(
      "restored",
      { name: "same-name", images: [{ imageName: "kept", tag: "1" }] },
      {
        "aidc.io/external-id": "dup-1",
        [IMAGES_ANNOTATION]: JSON.stringify({
          "kept:1": { at: "2026-01-01T00:00:00.000Z", attempts: 1, imageId: "img-old" },
        }),
      },
    );
    const obj = await eventually(async () => {
      const o = await read("restored");
      return o?.status?.images?.[0]?.state === "Saved" ? o : undefined;
    });
    expect(obj.status?.instanceId).toBe("dup-1");
    expect(obj.status?.images?.[0]).toMatchObject({ imageId: "img-old", state: "Saved" });
    await new Promise((r) => setTimeout(r, 2 * POLL_MS));
    expect(await op.admin.requests({ since, endpoint: "saveCciImage" })).toEqual([]);
  });

  it("never sends again a save whose answer was not recorded, and says what to do", async () => {
    const since = (await op.admin.requests()).at(-1)?.seq ?? 0;
    // What a crash between the marker write and the answer write leaves behind.
    await create(
      "crashed",
      { instanceId: "crash-1", images: [{ imageName: "lost", tag: "1" }] },
      {
        [IMAGES_ANNOTATION]: JSON.stringify({
          "lost:1": { at: "2026-01-01T00:00:00.000Z", attempts: 1 },
        }),
      },
    );
    const obj = await eventually(async () => {
      const o = await read("crashed");
      return o?.status?.images?.[0]?.state ? o : undefined;
    });
    expect(obj.status?.images?.[0]?.state).toBe("Failed");
    expect(obj.status?.images?.[0]?.message).toMatch(/SaveOutcomeUnknown.*add it back/);
    expect(obj.status?.conditions?.find((c) => c.type === "ImagesSaved")).toMatchObject({
      status: "False",
      reason: "SaveOutcomeUnknown",
    });
    await new Promise((r) => setTimeout(r, 2 * POLL_MS));
    expect(await op.admin.requests({ since, endpoint: "saveCciImage" })).toEqual([]);
  });
});
