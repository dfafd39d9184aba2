/**
 * The operator against services whose words and shapes the spec leaves open. NAS status
 * words in another letter case than the spec shows them (`RUNNING` as every other
 * status of the spec, or `running`): a NasVolume is Ready and is scaled as with
 * `Running`, its status shows the spec's spelling, and nothing is ordered twice. An
 * empty list page answered as `data: null` or `{}`: a TrainingTemplate (found by name
 * in the template list) and a NasVolume are Ready as with an empty page.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nasVolumeController } from "../../src/controllers/nasvolume/controller.js";
import { trainingTemplateController } from "../../src/controllers/trainingtemplate/controller.js";
import { nasVolumeCrd } from "../../src/crds/nasvolume.js";
import { trainingTemplateCrd } from "../../src/crds/trainingtemplate.js";
import type { EmptyListData, NasStatusCase } from "../../src/emulator/state.js";
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

describe("a service answering an empty list page as null or {}", () => {
  let op: TestOperator;
  let nas: ObjectsOf;
  let templates: ObjectsOf;

  beforeAll(async () => {
    const namespace = await createNamespace(adminKubeConfig(), "service-empty-lists");
    op = await startTestOperator({
      controllers: [nasVolumeController, trainingTemplateController],
      namespaces: [namespace],
      emulatorOptions: { subscriptionDelayMs: 300 },
    });
    nas = new ObjectsOf(op.kube, nasVolumeCrd, namespace);
    templates = new ObjectsOf(op.kube, trainingTemplateCrd, namespace);
  }, 60_000);
  afterAll(async () => {
    await op?.stop();
  });

  it.each(["null", "emptyObject"] as EmptyListData[])(
    "makes a TrainingTemplate and a NasVolume Ready when an empty page is %s",
    async (emptyListData) => {
      await op.admin.configure({ emptyListData });
      const name = `empty-${emptyListData.toLowerCase()}`;
      const since = op.emulator.requestLog.lastSeq();
      await templates.create(name, {
        trainingType: "PRE_TRAINING",
        trainingFramework: "PyTorch",
        image: "registry.example.com/ml/train:1",
        productCode: "train.cpu.16",
        workerCount: 1,
      });
      await nas.create(name, nasSpec);
      await templates.waitForCondition(name, "Ready", "True");
      await nas.waitForCondition(name, "Ready", "True", "Available");
      const lists = op.emulator.requestLog.read({ since, endpoint: "listTemplates" });
      expect(lists.length).toBeGreaterThan(0);
      const templatesNamed = [...op.emulator.state.templates.values()].filter(
        (t) => t.fields.name === name,
      );
      expect(templatesNamed).toHaveLength(1);
    },
  );
});
