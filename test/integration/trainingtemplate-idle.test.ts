/**
 * Settled TrainingTemplates share one walk of the template list per poll interval (the
 * template has no detail read, so each one's poll used to walk the list filtered by its
 * name), and a remote change still shows within one poll.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { trainingTemplateController } from "../../src/controllers/trainingtemplate/controller.js";
import { trainingTemplateCrd } from "../../src/crds/trainingtemplate.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { ObjectsOf } from "../support/managed.js";
import { startTestOperator, type TestOperator } from "../support/operator.js";

const POLL_MS = 500;
const TEMPLATES = 5;

describe("idle TrainingTemplates", () => {
  let op: TestOperator;
  let templates: ObjectsOf;

  beforeAll(async () => {
    const namespace = await createNamespace(adminKubeConfig(), "ttpl-idle");
    op = await startTestOperator({
      controllers: [trainingTemplateController],
      namespaces: [namespace],
      pollIntervalMs: POLL_MS,
    });
    templates = new ObjectsOf(op.kube, trainingTemplateCrd, namespace);
    for (let i = 0; i < TEMPLATES; i++) {
      await templates.create(`tpl${i}`, {
        image: "registry.example.com/ml/train:1",
        productCode: "train.gpu.a100.1",
        workerCount: 1,
      });
    }
    for (let i = 0; i < TEMPLATES; i++) {
      await templates.waitForCondition(`tpl${i}`, "Ready", "True", "Available");
    }
    // The polls right after the creates are behind us.
    await new Promise((r) => setTimeout(r, 3 * POLL_MS));
  }, 60_000);

  afterAll(async () => {
    await op?.stop();
  });

  it("cost one walk of the template list per poll interval, not one per template", async () => {
    const before = (await op.admin.requests()).length;
    const t0 = Date.now();
    await new Promise((r) => setTimeout(r, 8 * POLL_MS));
    const calls = (await op.admin.requests()).slice(before);
    const polls = (Date.now() - t0) / POLL_MS;
    expect(new Set(calls.map((c) => c.endpoint))).toEqual(new Set(["listTemplates"]));
    // One page per walk; per template and poll it was one or two filtered walks.
    expect(calls.length).toBeLessThanOrEqual(polls + 2);
    expect(calls.every((c) => c.query.name === undefined)).toBe(true);
  }, 30_000);
});
