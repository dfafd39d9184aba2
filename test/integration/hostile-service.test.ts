import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ANNOTATIONS } from "../../src/controllers/managed/create-protocol.js";
import { nasVolumeControllerWith } from "../../src/controllers/nasvolume/controller.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";

/**
 * A hostile service answer costs one object a condition, never the process: odd ids,
 * huge and endless bodies, against the NasVolume controller, the real API server and
 * the emulator.
 */
describe("a hostile service answer", () => {
  let op: TestOperator;
  let nas: ObjectsOf;
  let namespace = "";

  beforeAll(async () => {
    namespace = await createNamespace(adminKubeConfig(), "hostile");
    op = await startTestOperator({
      controllers: [nasVolumeControllerWith({ visibilityGraceMs: 1_000 })],
      namespaces: [namespace],
    });
    nas = new ObjectsOf(op.kube, nasVolumeCrd, namespace);
  }, 60_000);

  afterAll(async () => {
    await op?.stop();
  });

  it.each([".", ".."])(
    "an external-id annotation %j sends no request and holds the object with InvalidRemoteId",
    async (id) => {
      const name = id === "." ? "dot" : "dotdot";
      await nas.create(
        name,
        { productCode: "nas.capacity.standard" },
        {
          [ANNOTATIONS.externalId]: id,
        },
      );
      const obj = await nas.waitForCondition(name, "Synced", "False", "InvalidRemoteId");
      expect(conditionOf(obj, "Synced")?.message).toContain("is not a well-formed service id");
      // Nothing was read for it, and no request went to a path the emulator cannot route
      // (a client resolving "/instance/../detail" would send "/instance/detail").
      const requests = await op.admin.requests({});
      expect(requests.filter((r) => r.endpoint === "getNas")).toEqual([]);
      expect(requests.filter((r) => r.endpoint === undefined)).toEqual([]);
    },
  );

  it.each([
    { kind: "oversized" as const, name: "huge" },
    { kind: "endless" as const, name: "endless" },
  ])(
    "a $kind body on a detail read is cut off: MalformedServiceAnswer, and the process goes on",
    async ({ kind, name }) => {
      await nas.create(name, { productCode: "nas.capacity.standard" });
      await nas.waitForCondition(name, "Ready", "True");
      const before = process.memoryUsage().rss;
      await op.admin.setFaults([{ kind, endpoint: "getNas" }]);
      try {
        const obj = await nas.waitForCondition(name, "Synced", "False", "MalformedServiceAnswer");
        expect(conditionOf(obj, "Synced")?.message).toContain("longer than the limit");
        // The operator runs in this process: a few cut-off bodies of 4 MiB, not 30 MB or
        // an endless stream, held at once.
        expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
      } finally {
        await op.admin.clearFaults();
      }
      await nas.waitForCondition(name, "Synced", "True");
    },
  );
});
