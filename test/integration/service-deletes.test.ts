/**
 * The operator against a service that refuses the delete of a resource it is releasing
 * already (400 or 409 "already being released"; the spec does not say what a second
 * delete answers). A first delete acts and its answer is lost (a 500), so the client's
 * retry of it is refused: a NasVolume, a BlockVolume and a FileSystem under
 * deletionPolicy Delete still go once the service no longer shows their resources, and
 * leave nothing behind.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blockVolumeController } from "../../src/controllers/blockvolume/controller.js";
import { fileSystemController } from "../../src/controllers/filesystem/controller.js";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { blockVolumeCrd } from "../../src/crds/blockvolume.js";
import { fileSystemCrd } from "../../src/crds/filesystem.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";

/** How long the service shows a deleted resource (Releasing, deleting). */
const RELEASE_MS = 3_000;
const DELETES = ["deleteNas", "deleteVolume", "deleteFileSystem"];

describe("a service refusing a second delete of a resource it is releasing", () => {
  let op: TestOperator;
  let nas: ObjectsOf;
  let volumes: ObjectsOf;
  let fileSystems: ObjectsOf;

  beforeAll(async () => {
    const namespace = await createNamespace(adminKubeConfig(), "service-deletes");
    op = await startTestOperator({
      controllers: [nasVolumeController, blockVolumeController, fileSystemController],
      namespaces: [namespace],
      emulatorOptions: {
        subscriptionDelayMs: 300,
        nasReleaseDelayMs: RELEASE_MS,
        volumeTransitionMs: RELEASE_MS,
        fileStorageDelayMs: RELEASE_MS,
      },
      service: { endpoints: { deleteNas: "DELETE /v1/nasStorage/instance/{id}" } },
    });
    nas = new ObjectsOf(op.kube, nasVolumeCrd, namespace);
    volumes = new ObjectsOf(op.kube, blockVolumeCrd, namespace);
    fileSystems = new ObjectsOf(op.kube, fileSystemCrd, namespace);
  }, 60_000);
  afterAll(async () => {
    await op?.stop();
  });

  const idOf = (o: KubeObject) => o.metadata?.annotations?.["aidc.io/external-id"] ?? "";

  it.each([409, 400])(
    "deletes a NAS, a volume and a file system whose delete answer was lost and whose repeat is refused with %i",
    async (status) => {
      await op.admin.configure({ repeatDeleteStatus: status });
      const name = `refused-${status}`;
      await nas.create(name, {
        productCode: "nas.capacity.standard",
        capacityGB: 100,
        deletionPolicy: "Delete",
      });
      await volumes.create(name, { sizeGB: 20, volumeType: "ssd", deletionPolicy: "Delete" });
      await fileSystems.create(name, { sizeGB: 10, mounts: [], deletionPolicy: "Delete" });
      const ids: string[] = [];
      for (const objects of [nas, volumes, fileSystems]) {
        ids.push(
          idOf(await objects.waitFor(name, (o) => conditionOf(o, "Ready")?.status === "True")),
        );
      }
      const since = op.emulator.requestLog.lastSeq();
      op.emulator.faults.set(
        DELETES.map((endpoint) => ({
          kind: "error" as const,
          endpoint,
          acting: true,
          httpStatus: 500,
          times: 1,
        })),
      );
      try {
        for (const objects of [nas, volumes, fileSystems]) await objects.delete(name);
        for (const objects of [nas, volumes, fileSystems]) {
          await objects.waitForGone(name, 6 * RELEASE_MS);
        }
      } finally {
        op.emulator.faults.clear();
      }
      const state = op.emulator.state;
      expect(state.nas.has(ids[0] ?? "")).toBe(false);
      expect(state.volumes.records.has(ids[1] ?? "")).toBe(false);
      expect(state.fileSystems.byId.has(ids[2] ?? "")).toBe(false);
      for (const endpoint of DELETES) {
        const answers = op.emulator.requestLog.read({ since, endpoint }).map((r) => r.status);
        // The lost answer, then the refused repeat: each resource was deleted once.
        expect(answers.slice(0, 2), endpoint).toEqual([500, status]);
      }
    },
  );
});
