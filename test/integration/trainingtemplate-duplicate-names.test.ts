/**
 * A service that lets two templates share a name, against a real API server and the
 * emulator: a template of the object's name made outside the cluster while its create
 * is under way (after the name was checked free) leaves two templates of one name. The
 * operator binds the one carrying its own owner mark and never updates the other (both
 * when the list shows env and when it leaves env out); when both carry its mark it cannot
 * tell them apart and stops with CreateOutcomeUnknown naming both, changing neither.
 * A service that refuses a taken name (`templateNameTakenStatus` 400 or 409) has the
 * object held with NameTakenRefused naming the name and what to do, nothing adopted or
 * changed; once the other template is deleted, it is created.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ANNOTATIONS } from "../../src/controllers/managed/decisions.js";
import { formatOwnerMark, ownerMark } from "../../src/controllers/managed/tenancy.js";
import { trainingTemplateController } from "../../src/controllers/trainingtemplate/controller.js";
import { trainingTemplateCrd } from "../../src/crds/trainingtemplate.js";
import type { EmulatorBehaviour } from "../../src/emulator/behaviour.js";
import { OWNER_MARK_ENV, withOwnerMarker } from "../../src/service/schemas/create.js";
import { adminKubeConfig, createNamespace } from "../support/kube.js";
import { conditionOf, ObjectsOf } from "../support/managed.js";
import {
  holdsFirst,
  startTestOperator,
  TEST_API_KEY,
  type TestOperator,
} from "../support/operator.js";

const SPEC = { image: "registry.example.com/ml/train:1", productCode: "train.cpu.16" };
const operators: TestOperator[] = [];
afterEach(async () => {
  for (const op of operators.splice(0)) await op.stop();
});

/**
 * TrainingTemplate `name` whose create call is held until a template of the same name,
 * `foreign(mark)` given the object's own mark, is made outside the cluster.
 */
async function raced(
  name: string,
  foreign: (mark: string) => Record<string, unknown>,
  emulatorOptions: Partial<EmulatorBehaviour> = {},
) {
  const namespace = await createNamespace(adminKubeConfig(), "tpl-dup");
  const held = holdsFirst("createTemplate");
  const op = await startTestOperator({
    controllers: [(deps) => trainingTemplateController(deps, { visibilityGraceMs: 1_000 })],
    namespaces: [namespace],
    emulatorOptions,
    makeService: held.makeService,
  });
  operators.push(op);
  const templates = new ObjectsOf(op.kube, trainingTemplateCrd, namespace);
  await templates.create(name, SPEC);
  await held.held;
  const made = await fetch(`${op.emulator.url}/v1/training/template/create`, {
    method: "POST",
    headers: { authorization: `Bearer ${TEST_API_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ name, ...foreign(formatOwnerMark(ownerMark(namespace, name))) }),
  });
  expect(made.status).toBe(200);
  const [other] = [...op.emulator.state.templates.values()];
  if (!other) throw new Error("the template made outside is missing");
  const fields = structuredClone(other.fields);
  held.release();
  return { op, templates, other: { id: other.id, fields } };
}

describe.each([false, true])("two templates of one name (lists omit env: %s)", (listsOmitEnv) => {
  it("binds the one with its own mark and never updates the other", async () => {
    const { op, templates, other } = await raced(
      "dup",
      () => ({ image: "elsewhere:1", desc: "made by hand" }),
      { listsOmitEnv },
    );
    const bound = await templates.waitForCondition("dup", "Ready", "True", undefined, 20_000);
    const id = (bound.status as { templateId?: string }).templateId;
    const own = [...op.emulator.state.templates.values()].filter((t) => t.id !== other.id);
    expect(own.map((t) => t.id)).toEqual([id]);
    expect(id).not.toBe(other.id);
    // A spec change updates its own template alone.
    await templates.patchSpec("dup", { image: "registry.example.com/ml/train:2" });
    await templates.waitFor(
      "dup",
      () =>
        op.emulator.state.templates.get(id ?? "")?.fields.image ===
        "registry.example.com/ml/train:2",
    );
    const updates = await op.admin.requests({ endpoint: "updateTemplate" });
    expect(updates.map((e) => e.path)).not.toContain(`/v1/training/template/${other.id}/update`);
    expect(op.emulator.state.templates.get(other.id)?.fields).toEqual(other.fields);
    expect(await op.admin.requests({ endpoint: "createTemplate" })).toHaveLength(2);
  }, 40_000);
});

describe("two templates of one name, both with the object's mark", () => {
  it("stops with CreateOutcomeUnknown naming both, and changes neither", async () => {
    const { op, templates, other } = await raced("twin", (mark) => ({
      image: "elsewhere:1",
      desc: withOwnerMarker("a copy", mark),
      env: { [OWNER_MARK_ENV]: mark },
    }));
    const stuck = await templates.waitForCondition(
      "twin",
      "Synced",
      "False",
      "CreateOutcomeUnknown",
      20_000,
    );
    const ids = [...op.emulator.state.templates.keys()];
    expect(ids).toHaveLength(2);
    const message = conditionOf(stuck, "Synced")?.message ?? "";
    for (const id of ids) expect(message).toContain(id);
    expect((stuck.status as { templateId?: string }).templateId).toBeUndefined();
    expect(await op.admin.requests({ endpoint: "updateTemplate" })).toEqual([]);
    expect(op.emulator.state.templates.get(other.id)?.fields).toEqual(other.fields);
  }, 40_000);
});

describe.each([400, 409])("a service that refuses a taken name with %i", (status) => {
  it("holds the object with a condition naming the name, adopts and changes nothing, and creates once the other is deleted", async () => {
    const { op, templates, other } = await raced(
      "taken",
      () => ({ image: "elsewhere:1", desc: "made by hand" }),
      { templateNameTakenStatus: status },
    );
    const held = await templates.waitForCondition(
      "taken",
      "Ready",
      "False",
      "NameTakenRefused",
      20_000,
    );
    const message = conditionOf(held, "Synced")?.message ?? "";
    expect(conditionOf(held, "Synced")?.reason).toBe("NameTakenRefused");
    expect(message).toContain(`a template named taken already exists in the service (${other.id})`);
    expect(message).toContain("pick another name");
    expect(message).toContain("delete that template");
    // Held: nothing adopted, nothing changed, nothing sent again, however many polls.
    await new Promise((r) => setTimeout(r, 2_000));
    const now = await templates.get("taken");
    expect((now?.status as { templateId?: string } | undefined)?.templateId).toBeUndefined();
    expect(now?.metadata?.annotations?.[ANNOTATIONS.externalId]).toBeUndefined();
    expect([...op.emulator.state.templates.keys()]).toEqual([other.id]);
    expect(op.emulator.state.templates.get(other.id)?.fields).toEqual(other.fields);
    expect(await op.admin.requests({ endpoint: "updateTemplate" })).toEqual([]);
    expect(await op.admin.requests({ endpoint: "deleteTemplate" })).toEqual([]);
    expect(await op.admin.requests({ endpoint: "createTemplate" })).toHaveLength(2);

    const gone = await fetch(`${op.emulator.url}/v1/training/template/${other.id}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${TEST_API_KEY}` },
    });
    expect(gone.status).toBe(200);
    const ready = await templates.waitForCondition("taken", "Ready", "True", undefined, 20_000);
    const id = (ready.status as { templateId?: string }).templateId;
    expect([...op.emulator.state.templates.keys()]).toEqual([id]);
    expect(id).not.toBe(other.id);
    expect(await op.admin.requests({ endpoint: "createTemplate" })).toHaveLength(3);
  }, 60_000);
});
