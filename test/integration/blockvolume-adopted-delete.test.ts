/**
 * A BlockVolume that adopts a volume attached where its spec asks and is deleted before
 * any reconcile recorded that attachment as its own: the delete detaches it (the spec
 * asks for that attachment, so it is the object's), then deletes it. Made deterministic
 * by creating and deleting the object (held by its finalizer) before an operator
 * watches its namespace.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BLOCK_VOLUME_FINALIZER,
  blockVolumeController,
} from "../../src/controllers/blockvolume/controller.js";
import { blockVolumeCrd } from "../../src/crds/blockvolume.js";
import { BlockVolumeService } from "../../src/service/kinds/blockvolume.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { ObjectsOf } from "../support/managed.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";

describe("BlockVolume: delete of an adopted, attached volume before a reconcile", () => {
  let op: TestOperator;
  let later: TestOperator | undefined;
  let namespace = "";

  beforeAll(async () => {
    const unwatched = await createNamespace(adminKubeConfig(), "bv-adopt-idle");
    namespace = await createNamespace(adminKubeConfig(), "bv-adopt");
    // An operator of another namespace: the emulator, and a kube client of the test.
    op = await startTestOperator({
      controllers: [blockVolumeController],
      namespaces: [unwatched],
      emulatorOptions: { volumeTransitionMs: 200 },
    });
  }, 60_000);

  afterAll(async () => {
    await later?.stop();
    await op?.stop();
  });

  it("detaches the attachment the spec asks for, then deletes the volume", async () => {
    const id = await new BlockVolumeService(op.service).createVolume({
      name: "adopted",
      sizeGB: 5,
      volumeType: "ssd",
    });
    await op.admin.setVolumeState(id, { status: "in-use", instanceId: "cci-0001" });
    await op.kube.create(blockVolumeCrd, {
      apiVersion: `${blockVolumeCrd.group}/${blockVolumeCrd.version}`,
      kind: blockVolumeCrd.kind,
      metadata: { name: "adopted", namespace, finalizers: [BLOCK_VOLUME_FINALIZER] },
      spec: {
        volumeId: id,
        sizeGB: 5,
        volumeType: "ssd",
        attachTo: { instanceId: "cci-0001" },
        deletionPolicy: "Delete",
      },
    });
    const volumes = new ObjectsOf(op.kube, blockVolumeCrd, namespace);
    await volumes.delete("adopted");
    const since = (await op.admin.requests()).at(-1)?.seq ?? 0;

    later = await startTestOperator({
      controllers: [blockVolumeController],
      namespaces: [namespace],
      emulator: op.emulator,
    });
    await volumes.waitForGone("adopted", 30_000);
    const writes = (await op.admin.requests({ since }))
      .filter((r) => r.path.includes(`/v1/volumes/${id}`) && r.method !== "GET")
      .map((r) => `${r.endpoint} ${r.status}`);
    expect(writes).toEqual(["detachVolume 200", "deleteVolume 200"]);
  }, 60_000);
});
