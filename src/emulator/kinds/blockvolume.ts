/**
 * The BlockVolume kind's operations in the emulator (gathered by the generated
 * kinds/index.ts), with the assumed payloads (schemas shared with the client) and the
 * lifecycle and refusals of ../volumes.ts: create, attach, detach, delete, and the
 * assumed detail and list.
 */

import {
  attachVolumeBodySchema,
  createVolumeBodySchema,
  detachVolumeBodySchema,
} from "../../service/kinds/blockvolume.js";
import type { KIND_ENDPOINT_TABLES } from "../../service/kinds/index.js";
import {
  badRequest,
  EmulatorRefusal,
  fuzzyMatch,
  type Handler,
  type HandlerContext,
  listedRecord,
  pageOfRecords,
  parseBody,
  queryText,
  repeatedDelete,
  UnknownIdRefusal,
} from "../handler-context.js";
import { type VolumeRecord, VolumeRefusal, volumeView } from "../volumes.js";

/** Runs `op`, turning a volume refusal into the envelope's (404 as an unknown id). */
function refusing<T>(op: () => T): T {
  try {
    return op();
  } catch (err) {
    if (!(err instanceof VolumeRefusal)) throw err;
    if (err.status === 404) throw new UnknownIdRefusal(404, err.message);
    throw new EmulatorRefusal(err.status, err.message);
  }
}

function list(ctx: HandlerContext): unknown {
  const { state, query } = ctx;
  const name = queryText(query, "name");
  const status = queryText(query, "status")?.toLowerCase();
  const instanceId = queryText(query, "instanceId");
  const matching: VolumeRecord[] = [];
  for (const v of state.volumes.records.values()) {
    if (!state.volumes.isListed(v) || !fuzzyMatch(v.name, name)) continue;
    if (status !== undefined && v.status.toLowerCase() !== status) continue;
    if (instanceId !== undefined && v.instanceId !== instanceId) continue;
    matching.push(v);
  }
  const page = pageOfRecords(matching, ctx);
  return { ...page, records: page.records.map((v) => listedRecord(volumeView(v), state)) };
}

/** The block volume operations, by endpoint name. */
export const handlers = {
  createVolume: (ctx) => {
    const body = parseBody(createVolumeBodySchema, ctx.body);
    return volumeView(ctx.state.volumes.create(ctx.state.nextId("vol"), body));
  },
  attachVolume: (ctx) => {
    const { instanceId } = parseBody(attachVolumeBodySchema, ctx.body);
    const id = ctx.params.id ?? "";
    // The volume's own refusals first: an unknown volume is a 404, not the instance.
    refusing(() => ctx.state.volumes.get(id));
    if (!ctx.state.cci.has(instanceId)) throw badRequest(`instance ${instanceId} not found`);
    return volumeView(refusing(() => ctx.state.volumes.attach(id, instanceId)));
  },
  detachVolume: (ctx) => {
    const { instanceId } = parseBody(detachVolumeBodySchema, ctx.body);
    return volumeView(refusing(() => ctx.state.volumes.detach(ctx.params.id ?? "", instanceId)));
  },
  deleteVolume: (ctx) => {
    const id = ctx.params.id ?? "";
    if (refusing(() => ctx.state.volumes.get(id)).status === "deleting") {
      repeatedDelete(ctx.state, "volume", id);
    }
    refusing(() => ctx.state.volumes.delete(id));
    return {};
  },
  getVolume: (ctx) => volumeView(refusing(() => ctx.state.volumes.get(ctx.params.id ?? ""))),
  listVolumes: list,
} satisfies Record<keyof (typeof KIND_ENDPOINT_TABLES)["blockvolume"], Handler>;
