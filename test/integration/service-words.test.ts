/**
 * The operator against a service that writes NAS status words in another letter case
 * than the spec shows them (`RUNNING` as every other status of the spec, or `running`):
 * a NasVolume is Ready and is scaled as with `Running`, its status shows the spec's
 * spelling, and nothing is ordered twice.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import type { NasStatusCase } from "../../src/emulator/state.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";

const nasSpec = { productCode: "nas.capacity.standard", capacityGB: 100 };

describe("a service writing NAS status words in another letter case", () => {
  let op: TestOperator;
  let nas: ObjectsOf;

  beforeAll(async () => {
    const namespace = await createNamespace(adminKubeConfig(), "service-words");
    op = await startTestOperator({
      controllers: [nasVolumeController],
      namespaces: [namespace],
      emulatorOptions: { subscriptionDelayMs: 300 },
    });
    nas = new ObjectsOf(op.kube, nasVolumeCrd, namespace);
  }, 60_000);
  afterAll(async () => {
    await op?.stop();
  });

  it.each(["upper", "lower"] as NasStatusCase[])(
    "makes a NasVolume Ready and scales it when the service writes them in %s case",
    async (letterCase) => {
      await op.admin.configure({ nasStatusCase: letterCase });
      const name = `words-${letterCase}`;
      await nas.create(name, nasSpec);
      const ready = await nas.waitForCondition(name, "Ready", "True", "Available");
      expect(ready.status).toMatchObject({ phase: "Ready", remoteStatus: "Running" });
      const id = (ready.status as { storageId: string }).storageId;
      const since = op.emulator.requestLog.lastSeq();
      await nas.patchSpec(name, { capacityGB: 150 });
      await nas.waitFor(
        name,
        (o) =>
          (o.status as { capacityGB?: number }).capacityGB === 150 &&
          conditionOf(o, "Ready")?.status === "True",
      );
      expect(op.emulator.state.nas.get(id)?.quotaGB).toBe(150);
      expect(op.emulator.requestLog.read({ since, endpoint: "scaleNas" })).toHaveLength(1);
      const reads = op.emulator.requestLog.read({ since, endpoint: "getNas" });
      expect(reads.length).toBeGreaterThan(0);
      const named = [...op.emulator.state.nas.values()].filter((n) => n.name === name);
      expect(named).toHaveLength(1);
    },
  );
});
