/**
 * File system operations of the emulator. The spec shows no payloads, so any JSON
 * object is accepted and kept; the emulator adds `id` and `status`, and mounts only
 * existing file systems.
 */
import type { EndpointName } from "../../service/endpoints.js";
import { jsonObjectBodySchema } from "../../service/schemas/block-file-storage.js";
import { type Handler, notFound, parseBody } from "../handler-context.js";

/** The file system operations, by endpoint name. */
export const fileSystemHandlers = {
  createFileSystem: (ctx) => {
    const body = parseBody(jsonObjectBodySchema, ctx.body);
    const id = ctx.state.nextId("fs");
    const record = { id, fields: { ...body, id, status: "available" } };
    ctx.state.fileSystems.set(id, record);
    return record.fields;
  },
  createFileSystemMount: (ctx) => {
    const fsId = ctx.params.id ?? "";
    if (!ctx.state.fileSystems.has(fsId)) throw notFound("file system", fsId);
    const body = parseBody(jsonObjectBodySchema, ctx.body);
    const id = ctx.state.nextId("mnt");
    const record = { id, fields: { ...body, id, fileSystemId: fsId, status: "available" } };
    ctx.state.mounts.set(id, record);
    return record.fields;
  },
} satisfies Partial<Record<EndpointName, Handler>>;
