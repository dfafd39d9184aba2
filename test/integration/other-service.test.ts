/**
 * The operator against a service like the independent one of issue 15: served under a
 * base URL with a path prefix, lists capped at 20 records a page, and a 500 envelope
 * (not a 404) for an unknown id, or success with an empty object. A create found by its
 * client token on the last of several pages is adopted once; a NAS or task deleted outside the cluster is reported
 * gone from list evidence (absent from complete listings in a row), while one the list
 * still shows is not, whatever its detail read answers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { trainingJobController } from "../../src/controllers/trainingjob/controller.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { trainingJobCrd } from "../../src/crds/trainingjob.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import { startTestOperator, TEST_API_KEY, type TestOperator } from "../support/operator.js";

const jobSpec = {
  image: "registry.example.com/ml/train:1",
  productCode: "train.cpu.16",
  workerCount: 1,
};
const nasSpec = { productCode: "nas.capacity.standard", capacityGB: 100 };
const running = (o: KubeObject) =>
  (o.status as { phase?: string } | undefined)?.phase === "Running";
const actsThenFails = (endpoint: string) =>
  ({ kind: "error", endpoint, acting: true, httpStatus: 500, times: 1 }) as const;
/** Window of the test: absence from the list counts 2 s after a create. */
const WINDOW_MS = 2_000;

// An unknown id answered with a 500 envelope, or with success and an empty object.
describe.each([500, 200])(
  "a service under /api/gw with pages of 20 and a %i for unknown ids",
  (unknownIdStatus) => {
    let emulator: RunningEmulator;
    let op: TestOperator;
    let nas: ObjectsOf;
    let jobs: ObjectsOf;

    beforeAll(async () => {
      const namespace = await createNamespace(
        adminKubeConfig(),
        `other-service-${unknownIdStatus}`,
      );
      emulator = await startEmulator({
        apiKey: TEST_API_KEY,
        subscriptionDelayMs: 300,
        basePath: "/api/gw",
        pageSizeCap: 20,
        unknownIdStatus,
        // 45 NAS and 45 tasks whose names contain the objects' names: every lookup by
        // name walks three pages.
        seed: {
          nas: Array.from({ length: 45 }, (_, i) => ({ name: `gw-${i}` })),
          tasks: Array.from({ length: 45 }, (_, i) => ({ name: `gw-${i}` })),
        },
      });
      op = await startTestOperator({
        controllers: [nasVolumeController, trainingJobController],
        namespaces: [namespace],
        emulator,
        service: { endpoints: { deleteNas: "DELETE /v1/nasStorage/instance/{id}" } },
        config: {
          service: {
            baseUrl: emulator.url,
            allowInsecureHttp: true,
            listVisibilityWindowMs: WINDOW_MS,
          },
        },
      });
      nas = new ObjectsOf(op.kube, nasVolumeCrd, namespace);
      jobs = new ObjectsOf(op.kube, trainingJobCrd, namespace);
    }, 60_000);
    afterAll(async () => {
      await op?.stop();
      await emulator?.stop();
    });

    const remote = (name: string) => ({
      nas: [...op.emulator.state.nas.values()].filter((n) => n.name === name),
      tasks: [...op.emulator.state.tasks.values()].filter((t) => t.name === name),
    });

    it("serves the operator under the prefix and finds an acting-then-failing create on page 3", async () => {
      expect(op.emulator.url).toMatch(/\/api\/gw$/);
      op.emulator.faults.set([actsThenFails("subscribeNas"), actsThenFails("createTrainingTask")]);
      await nas.create("gw", nasSpec);
      await jobs.create("gw", jobSpec);
      await nas.waitForCondition("gw", "Ready", "True", "Available");
      await jobs.waitFor("gw", running);
      expect(remote("gw").nas).toHaveLength(1);
      expect(remote("gw").tasks).toHaveLength(1);
      const lists = await op.admin.requests({ endpoint: "listNas" });
      expect(lists.some((r) => r.query.pageNo === "3")).toBe(true);
      expect(lists.every((r) => r.path.startsWith("/api/gw/"))).toBe(true);
      await nas.waitForEvents("gw", ["Recovered"]);
    });

    it("reports a NAS deleted outside the cluster gone from the list, whatever its detail read answers", async () => {
      await nas.create("gw-gone", nasSpec);
      const ready = await nas.waitForCondition("gw-gone", "Ready", "True", "Available");
      const id = (ready.status as { storageId: string }).storageId;
      const since = op.emulator.requestLog.lastSeq();
      op.emulator.state.nas.delete(id);
      const gone = await nas.waitForCondition("gw-gone", "Ready", "False", "RemoteNotFound");
      expect(conditionOf(gone, "Ready")?.message).toMatch(
        /absent from [2-9] complete listings in a row/,
      );
      const reads = op.emulator.requestLog.read({ since, endpoint: "getNas" });
      expect(reads.some((r) => r.status === unknownIdStatus)).toBe(true);
      expect(reads.every((r) => r.status !== 404)).toBe(true);
      // The other NasVolume, still listed, stays Ready.
      expect(conditionOf(await nas.get("gw"), "Ready")?.status).toBe("True");
    });

    it("releases a deleted Delete object once its NAS is gone from the list, whatever its detail read answers", async () => {
      await nas.create("gw-deleted", { ...nasSpec, deletionPolicy: "Delete" });
      await nas.waitForCondition("gw-deleted", "Ready", "True", "Available");
      const id = remote("gw-deleted").nas[0]?.id;
      const since = op.emulator.requestLog.lastSeq();
      await nas.delete("gw-deleted");
      await nas.waitForGone("gw-deleted");
      expect(remote("gw-deleted").nas).toHaveLength(0);
      const reads = op.emulator.requestLog.read({ since, endpoint: "getNas" });
      expect(reads.some((r) => r.status === unknownIdStatus && r.path.includes(`/${id}/`))).toBe(
        true,
      );
      const deletes = op.emulator.requestLog.read({ since, endpoint: "deleteNas" });
      expect(deletes).toHaveLength(1);
    });

    it("reports a task deleted outside the cluster gone the same way", async () => {
      await jobs.create("gw-gone", jobSpec);
      const job = await jobs.waitFor("gw-gone", running);
      op.emulator.state.tasks.delete((job.status as { taskId: string }).taskId);
      const gone = await jobs.waitForCondition("gw-gone", "Ready", "False", "RemoteNotFound");
      expect(conditionOf(gone, "Ready")?.message).toMatch(/complete listings in a row/);
    });

    it("never takes a resource the list still shows as gone, whatever its detail read answers", async () => {
      await nas.create("gw-listed", nasSpec);
      await nas.waitForCondition("gw-listed", "Ready", "True", "Available");
      await new Promise((r) => setTimeout(r, WINDOW_MS));
      op.emulator.faults.set([{ kind: "error", endpoint: "getNas", httpStatus: 500 }]);
      try {
        // A settled object's poll reads the NAS list; a spec change makes it read the detail.
        await nas.patchSpec("gw-listed", { mountPath: "/data/look_again" });
        await nas.waitForCondition("gw-listed", "Synced", "False");
        await new Promise((r) => setTimeout(r, 2_000));
        const obj = await nas.get("gw-listed");
        expect(conditionOf(obj, "Ready")?.reason).not.toBe("RemoteNotFound");
        expect((await op.admin.requests({ endpoint: "listNas" })).length).toBeGreaterThan(0);
      } finally {
        op.emulator.faults.clear();
      }
      await nas.waitForCondition("gw-listed", "Synced", "True");
    });
  },
);
