/**
 * The TrainingTemplate kind's operations in the emulator (gathered by the generated
 * kinds/index.ts): create, full update, list and delete. Stored in
 * wire form, with the framework canonicalised and spelled `trainingFramwork`
 * (`templateView` adds the id and times).
 */
import type { KIND_ENDPOINT_TABLES } from "../../service/kinds/index.js";
import { templateBodySchema } from "../../service/kinds/trainingtemplate.js";
import {
  badRequest,
  EmulatorRefusal,
  fuzzyMatch,
  type Handler,
  type HandlerContext,
  listedRecord,
  pageOfRecords,
  parseBody,
  queryInt,
  queryText,
  recordOfPathId,
  repeatedDelete,
} from "../handler-context.js";
import type { TemplateRecord } from "../records.js";
import { naive } from "../views.js";

function templateFields(body: unknown): Record<string, unknown> {
  const parsed = parseBody(templateBodySchema, body);
  const { trainingFramework, trainingFramwork, ...rest } = parsed;
  if (trainingFramework && trainingFramwork && trainingFramework !== trainingFramwork) {
    throw badRequest("trainingFramwork and trainingFramework disagree; send one of them");
  }
  const framework = trainingFramwork ?? trainingFramework;
  return { ...rest, ...(framework ? { trainingFramwork: framework } : {}) };
}

function existing(ctx: HandlerContext) {
  return recordOfPathId(ctx, ctx.state.templates, "training template");
}

/** A template of the assumed template list (`listedRecord`): its wire fields plus id and times. */
export function templateView(t: TemplateRecord): Record<string, unknown> {
  return {
    ...t.fields,
    id: t.id,
    createdTime: naive(t.createdAt),
    lastUpdateTime: naive(t.updatedAt),
  };
}

/** The template operations, by endpoint name. */
export const handlers = {
  createTemplate: (ctx) => {
    const fields = templateFields(ctx.body);
    const refusal = ctx.state.behaviour.templateNameTakenStatus;
    const taken = [...ctx.state.templates.values()].find((t) => t.fields.name === fields.name);
    if (refusal > 0 && taken) {
      throw new EmulatorRefusal(refusal, `a template named ${String(fields.name)} already exists`);
    }
    const id = ctx.state.nextId("tpl");
    const now = ctx.state.now();
    ctx.state.templates.set(id, { id, fields, createdAt: now, updatedAt: now });
    return {};
  },
  updateTemplate: (ctx) => {
    const t = existing(ctx);
    t.fields = templateFields(ctx.body);
    t.updatedAt = ctx.state.now();
    return {};
  },
  listTemplates: (ctx) => {
    const name = queryText(ctx.query, "name");
    const aidcId = queryInt(ctx.query, "aidcId");
    const matching = [...ctx.state.templates.values()].filter(
      (t) =>
        fuzzyMatch(String(t.fields.name ?? ""), name) &&
        (aidcId === undefined || t.fields.aidcId === aidcId),
    );
    const page = pageOfRecords(matching, ctx);
    return { ...page, records: page.records.map((t) => listedRecord(templateView(t), ctx.state)) };
  },
  deleteTemplate: (ctx) => {
    const { id } = existing(ctx);
    const { state } = ctx;
    if (state.releases.has(id)) repeatedDelete(state, "training template", id);
    else state.releases.start(state.templates, id, state.now(), state.behaviour.taskReleaseDelayMs);
    return {};
  },
} satisfies Record<keyof (typeof KIND_ENDPOINT_TABLES)["trainingtemplate"], Handler>;
