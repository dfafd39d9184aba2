/**
 * A TrainingTemplate changed outside the cluster, against the real API server and the
 * emulator: the template list (read once per poll interval) shows the change; under
 * Update it is put back with one full update and a DriftCorrected event, under Observe
 * only it is reported (Synced=False DriftDetected naming the fields) and left alone.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { trainingTemplateController } from "../../src/controllers/trainingtemplate/controller.js";
import { trainingTemplateCrd } from "../../src/crds/trainingtemplate.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import type { TrainingTemplate } from "../../src/service/schemas/template.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";

const POLL_MS = 500;
const IMAGE = "registry.example.com/ml/train:1";
const SPEC = { image: IMAGE, productCode: "train.cpu.16", startCommand: "python train.py" };

let op: TestOperator;
let templates: ObjectsOf;

beforeAll(async () => {
  const ns = await createNamespace(adminKubeConfig(), "tpl-drift");
  op = await startTestOperator({
    controllers: [trainingTemplateController],
    namespaces: [ns],
    pollIntervalMs: POLL_MS,
  });
  templates = new ObjectsOf(op.kube, trainingTemplateCrd, ns);
}, 60_000);

afterAll(async () => {
  await op?.stop();
});

/** The template `id` as the service lists it. */
async function remoteTemplate(id: string): Promise<TrainingTemplate> {
  for await (const t of op.service.iterateTemplates()) if (t.id === id) return t;
  throw new Error(`template ${id} is not listed`);
}

const idOf = (o: KubeObject) => String(o.metadata?.annotations?.["aidc.io/external-id"] ?? "");
const updates = async (id: string) =>
  (await op.admin.requests({ endpoint: "updateTemplate" })).filter((e) => e.path.includes(id));

describe("a template changed outside the cluster", () => {
  it("is put back under Update, with one full update and a DriftCorrected event", async () => {
    await templates.create("fixed", SPEC);
    const ready = await templates.waitForCondition("fixed", "Ready", "True", undefined, 30_000);
    const id = idOf(ready);
    const before = (await updates(id)).length;
    const outside = await remoteTemplate(id);
    await op.service.updateTemplate(id, {
      name: outside.name,
      image: "registry.example.com/other:2",
      startCommand: "sleep 1",
      env: outside.env ?? {},
      resource: { productCode: "train.cpu.16" },
    });
    await eventually(async () => {
      const t = await remoteTemplate(id);
      return t.image === IMAGE && t.startCommand === SPEC.startCommand ? t : undefined;
    }, 20_000);
    await templates.waitForEvents("fixed", ["DriftCorrected"]);
    // The operator's own put-back is one update; then the template is settled again.
    await new Promise((r) => setTimeout(r, POLL_MS * 4));
    expect((await updates(id)).length - before).toBe(2);
  });

  it("is reported and left alone under Observe only", async () => {
    await templates.create("watched", SPEC);
    const ready = await templates.waitForCondition("watched", "Ready", "True", undefined, 30_000);
    const id = idOf(ready);
    await templates.patchSpec("watched", { managementPolicies: ["Observe"] });
    const outside = await remoteTemplate(id);
    await op.service.updateTemplate(id, {
      name: outside.name,
      image: "registry.example.com/other:3",
      env: outside.env ?? {},
      resource: { productCode: "train.cpu.16" },
    });
    const o = await templates.waitForCondition("watched", "Synced", "False", "DriftDetected");
    expect(conditionOf(o, "Synced")?.message).toContain("image");
    const after = (await updates(id)).length;
    await new Promise((r) => setTimeout(r, POLL_MS * 4));
    expect((await updates(id)).length).toBe(after);
    expect((await remoteTemplate(id)).image).toBe("registry.example.com/other:3");
  });
});
