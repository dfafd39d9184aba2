/**
 * The CciInstance kind's operations in the emulator (gathered by the generated
 * kinds/index.ts): the paged list with its filters, detail, error
 * details, and save-image (saveImageStatus true while the save runs); `cciView` is an
 * instance on the wire.
 */

import { saveCciImageBodySchema } from "../../service/kinds/cciinstance.js";
import type { KIND_ENDPOINT_TABLES } from "../../service/kinds/index.js";
import {
  badRequest,
  conflict,
  fuzzyMatch,
  type Handler,
  type HandlerContext,
  pageOfRecords,
  parseBody,
  queryInt,
  queryText,
  recordOfPathId,
} from "../handler-context.js";
import type { CciRecord } from "../records.js";
import type { EmulatorState } from "../state.js";
import { naive } from "../views.js";

function instance(ctx: HandlerContext): CciRecord {
  return recordOfPathId(ctx, ctx.state.cci, "CCI instance");
}

function list(ctx: HandlerContext): unknown {
  const { query, state } = ctx;
  const name = queryText(query, "name");
  const exact: Record<string, string | undefined> = {
    tenantId: queryText(query, "tenantId"),
    status: queryText(query, "status")?.toUpperCase(),
    id: queryText(query, "id"),
    orderInstanceId: queryText(query, "orderInstanceId"),
  };
  const aidcId = queryInt(query, "aidcId");
  const matching = [...state.cci.values()].filter((c) => {
    const f = c.fields;
    if (!fuzzyMatch(String(f.name ?? ""), name)) return false;
    if (aidcId !== undefined && f.aidcId !== aidcId) return false;
    return Object.entries(exact).every(([k, v]) => v === undefined || f[k] === v);
  });
  const page = pageOfRecords(matching, ctx);
  return { ...page, records: page.records.map((c) => cciView(c, state, false)) };
}

function saveImage(ctx: HandlerContext): Record<string, unknown> {
  const c = instance(ctx);
  const body = parseBody(saveCciImageBodySchema, ctx.body);
  const now = ctx.state.now();
  const status = String(c.fields.status);
  if (status !== "RUNNING" && status !== "STOPPED") {
    throw badRequest(
      `CCI instance ${c.id} is ${status}; only a RUNNING or STOPPED instance can be saved as an image`,
    );
  }
  if (now < c.savingImageUntil) throw conflict(`an image of CCI instance ${c.id} is being saved`);
  c.savingImageUntil = now + ctx.state.behaviour.saveImageDurationMs;
  const imageId = ctx.state.nextId("img");
  c.images.push({ imageId, imageName: body.imageName, tag: body.tag, savedAt: now });
  return { image_id: imageId };
}

const DETAIL_ONLY = ["instanceMor", "productId", "price", "priceUnit", "chargeMethod"];
const LIST_ONLY = [
  "tenantId",
  "tenantName",
  "createdBy",
  "creatorName",
  "jupyterHealth",
  "vscodeHealth",
  "storageSize",
  "bundle",
];

/** A CCI list record (`detail` false) or detail (`detail` true). */
export function cciView(
  c: CciRecord,
  state: EmulatorState,
  detail: boolean,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const skip = detail ? LIST_ONLY : DETAIL_ONLY;
  for (const [k, v] of Object.entries(c.fields)) if (!skip.includes(k)) out[k] = v;
  if (detail) {
    out.cciResource = c.fields.resource;
  } else {
    out.now = naive(state.now());
    out.saveImageStatus = state.now() < c.savingImageUntil;
  }
  return out;
}

/** The CCI operations, by endpoint name. */
export const handlers = {
  listCci: list,
  getCci: (ctx) => cciView(instance(ctx), ctx.state, true),
  getCciErrorDetails: (ctx) => {
    const c = instance(ctx);
    const e = c.errorDetails;
    return {
      instanceId: c.id,
      instanceStatus: e?.instanceStatus ?? c.fields.status,
      instanceSubStatus: e?.instanceSubStatus ?? c.fields.subStatus,
      errorDescription: e?.errorDescription ?? "",
      suggestion: e?.suggestion ?? "",
      errorDetail: e?.errorDetail ?? "",
    };
  },
  saveCciImage: saveImage,
} satisfies Record<keyof (typeof KIND_ENDPOINT_TABLES)["cciinstance"], Handler>;
