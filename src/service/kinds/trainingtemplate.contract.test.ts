/**
 * Contract: the template operations (kinds/trainingtemplate.ts), client against the
 * emulator: create, find by name, full update, delete, and the refusals.
 */
import { describe, expect, it } from "vitest";
import { emulatorPerFile, failure } from "../../../test/support/service-contract.js";
import { TRAINING_DELETES } from "../../../test/support/training-tasks.js";
import type { EmulatedService } from "../../emulator/harness.js";
import type { ServiceClient } from "../client.js";
import { ServiceNotFoundError } from "../errors.js";

let svc: EmulatedService;
let client: ServiceClient;
const DELAY = 1000;

emulatorPerFile({ manualTime: true, emulator: { subscriptionDelayMs: DELAY } }, (started) => {
  svc = started;
  client = svc.newClient({ endpoints: TRAINING_DELETES });
});

describe("templates", () => {
  it("creates a template, finds it by name, and replaces it in full", async () => {
    await client.createTemplate({
      name: "bert",
      trainingFramework: "deepspeed",
      priority: 2,
      image: "i",
      env: { A: "1" },
    });
    const [entry] = svc.emulator.requestLog.read({ endpoint: "createTemplate" });
    expect(entry?.body).toMatchObject({ trainingFramwork: "DeepSpeed" });
    const [tpl] = (await client.listTemplates({ name: "bert" })).records;
    expect(tpl).toMatchObject({
      name: "bert",
      trainingFramework: "DeepSpeed",
      priority: 2,
      env: { A: "1" },
    });
    await client.updateTemplate(tpl?.id as string, { name: "bert", image: "j" });
    const [after] = (await client.listTemplates({ name: "bert" })).records;
    expect(after).toMatchObject({ id: tpl?.id, image: "j" });
    expect(after?.env).toBeUndefined();
  });

  it("proves a name absent only from a complete walk of the whole list", async () => {
    await client.createTemplate({ name: "bert", image: "i" });
    expect(await client.provesTemplateNameAbsent("bert")).toBe(false);
    expect(await client.provesTemplateNameAbsent("bert-2")).toBe(true);
    const off = svc.newClient({ endpoints: { listTemplates: null } });
    expect(await off.provesTemplateNameAbsent("bert-2")).toBeUndefined();
  });

  it("lists templates without env under listsOmitEnv, and still proves a name absent", async () => {
    await client.createTemplate({ name: "bert", env: { A: "1" } });
    svc.emulator.state.behaviour.listsOmitEnv = true;
    try {
      const page = await client.listTemplates({});
      expect(page.records.map((t) => [t.name, t.env])).toEqual([["bert", undefined]]);
      expect(await client.provesTemplateNameAbsent("bert")).toBe(false);
      expect(await client.provesTemplateNameAbsent("bert-2")).toBe(true);
    } finally {
      svc.emulator.state.behaviour.listsOmitEnv = false;
    }
  });

  it("refuses to update or delete a template that does not exist", async () => {
    expect(await failure(client.updateTemplate("tpl-404", { name: "x" }))).toBeInstanceOf(
      ServiceNotFoundError,
    );
    expect(await failure(client.deleteTemplate("tpl-404"))).toBeInstanceOf(ServiceNotFoundError);
  });

  it("deletes a template when the delete operation is configured", async () => {
    await client.createTemplate({ name: "gone" });
    const [tpl] = (await client.listTemplates({ name: "gone" })).records;
    await client.deleteTemplate(tpl?.id as string);
    expect((await client.listTemplates({ name: "gone" })).records).toEqual([]);
  });
});
