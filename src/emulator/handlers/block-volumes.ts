/**
 * Block volume operations of the emulator. The spec shows no payloads, so any JSON
 * object is accepted and kept; the emulator adds `id` and `status` and enforces the
 * obvious rules (attach once, detach only when attached, no delete while attached).
 */
import type { EndpointName } from "../../service/endpoints.js";
import { jsonObjectBodySchema } from "../../service/schemas/block-file-storage.js";
import {
  badRequest,
  conflict,
  type Handler,
  type HandlerContext,
  notFound,
  parseBody,
} from "../handler-context.js";
import type { StorageObjectRecord } from "../records.js";

function volume(ctx: HandlerContext): StorageObjectRecord {
  const id = ctx.params.id ?? "";
  const v = ctx.state.volumes.get(id);
  if (!v) throw notFound("volume", id);
  return v;
}

/** The block volume operations, by endpoint name. */
export const blockVolumeHandlers = {
  createVolume: (ctx) => {
    const body = parseBody(jsonObjectBodySchema, ctx.body);
    const id = ctx.state.nextId("vol");
    const record = { id, fields: { ...body, id, status: "available" } };
    ctx.state.volumes.set(id, record);
    return record.fields;
  },
  attachVolume: (ctx) => {
    const v = volume(ctx);
    const body = parseBody(jsonObjectBodySchema, ctx.body);
    if (v.fields.status === "in-use")
      throw conflict(`volume ${v.id} is already attached to ${v.fields.attachedTo}`);
    v.fields = {
      ...v.fields,
      status: "in-use",
      attachedTo: body.instanceId ?? body.serverId ?? "unknown",
    };
    return v.fields;
  },
  detachVolume: (ctx) => {
    const v = volume(ctx);
    if (v.fields.status !== "in-use") throw badRequest(`volume ${v.id} is not attached`);
    const { attachedTo: _, ...rest } = v.fields;
    v.fields = { ...rest, status: "available" };
    return v.fields;
  },
  deleteVolume: (ctx) => {
    const v = volume(ctx);
    if (v.fields.status === "in-use") throw conflict(`volume ${v.id} is attached; detach it first`);
    ctx.state.volumes.delete(v.id);
    return {};
  },
} satisfies Partial<Record<EndpointName, Handler>>;
