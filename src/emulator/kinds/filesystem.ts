/**
 * File system operations of the emulator, in the shapes this project assumes
 * (docs/service-assumptions.md, "File systems and mounts"): create, detail with its
 * mounts, paged list, mount, and the deletes. Refusals: a mount of a file system that
 * is not `available` (409), on an unknown instance (400), or on an instance the file
 * system is already mounted on (409); the delete of a file system that has mounts (409).
 * `fileSystemView` is a file system on the wire, with its mounts.
 */

import {
  createFileSystemBodySchema,
  createFileSystemMountBodySchema,
} from "../../service/kinds/filesystem.js";
import type { KIND_ENDPOINT_TABLES } from "../../service/kinds/index.js";
import type { FileSystemRecord, MountRecord } from "../file-systems.js";
import {
  badRequest,
  conflict,
  fuzzyMatch,
  type Handler,
  type HandlerContext,
  listedRecord,
  notFound,
  pageOfRecords,
  parseBody,
  queryText,
  recordOfPathId,
  repeatedDelete,
} from "../handler-context.js";
import { naive } from "../views.js";

/**
 * The emulator's reading of the mount path rule (the spec's Limits for a mount path:
 * 2 to 64 characters, only letters, digits, underscore and slash), applied to mounts.
 */
const MOUNT_PATH = /^[a-zA-Z0-9_/]{2,64}$/;

function fileSystem(ctx: HandlerContext): FileSystemRecord {
  return recordOfPathId(ctx, ctx.state.fileSystems.byId, "file system");
}

function create(ctx: HandlerContext): unknown {
  const { state } = ctx;
  const body = parseBody(createFileSystemBodySchema, ctx.body);
  const now = state.now();
  const fs: FileSystemRecord = {
    id: state.nextId("fs"),
    name: body.name,
    description: body.description ?? "",
    sizeGB: body.sizeGB,
    type: body.type ?? "standard",
    protocol: body.protocol ?? "NFS",
    aidcId: body.aidcId ?? 1,
    status: "creating",
    createdAt: now,
    visibleAt: now + state.behaviour.listVisibilityDelayMs,
    mounts: new Map(),
  };
  state.fileSystems.add(fs, state.behaviour.fileStorageDelayMs);
  return fileSystemView(fs);
}

function mount(ctx: HandlerContext): unknown {
  const { state } = ctx;
  const fs = fileSystem(ctx);
  const body = parseBody(createFileSystemMountBodySchema, ctx.body);
  if (fs.status !== "available") {
    throw conflict(`file system ${fs.id} is ${fs.status}; it can be mounted once available`);
  }
  if (body.mountPath !== undefined && !MOUNT_PATH.test(body.mountPath)) {
    throw badRequest(`mountPath ${body.mountPath} must match ${MOUNT_PATH.source}`);
  }
  if (!state.cci.has(body.instanceId)) {
    throw badRequest(`instance ${body.instanceId} not found`);
  }
  for (const m of fs.mounts.values()) {
    if (m.instanceId === body.instanceId) {
      throw conflict(
        `file system ${fs.id} is already mounted on instance ${body.instanceId} (mount ${m.id})`,
      );
    }
  }
  const id = state.nextId("mnt");
  const record: MountRecord = {
    id,
    instanceId: body.instanceId,
    ...(body.mountPath !== undefined ? { mountPath: body.mountPath } : {}),
    address: `10.30.0.${Number(id.slice(4)) % 250 || 250}:/${fs.id}`,
    status: "creating",
    createdAt: state.now(),
  };
  state.fileSystems.addMount(fs, record, state.behaviour.fileStorageDelayMs);
  return mountView(record);
}

function list(ctx: HandlerContext): unknown {
  const { state } = ctx;
  const name = queryText(ctx.query, "name");
  const matching = [...state.fileSystems.byId.values()].filter(
    (fs) => state.isListed(fs) && fuzzyMatch(fs.name, name),
  );
  const page = pageOfRecords(matching, ctx);
  return { ...page, records: page.records.map((fs) => listedRecord(fileSystemView(fs), state)) };
}

/** A mount of a file system. */
export function mountView(m: MountRecord): Record<string, unknown> {
  return {
    id: m.id,
    instanceId: m.instanceId,
    mountPath: m.mountPath ?? null,
    status: m.status,
    address: m.address,
    createdTime: naive(m.createdAt),
  };
}

/** A file system, with its mounts (detail and list alike). */
export function fileSystemView(fs: FileSystemRecord): Record<string, unknown> {
  return {
    id: fs.id,
    name: fs.name,
    description: fs.description,
    sizeGB: fs.sizeGB,
    type: fs.type,
    protocol: fs.protocol,
    status: fs.status,
    aidcId: fs.aidcId,
    createdTime: naive(fs.createdAt),
    mounts: [...fs.mounts.values()].map(mountView),
  };
}

/** The file system operations, by endpoint name (gathered by the generated index.ts). */
export const handlers = {
  createFileSystem: create,
  createFileSystemMount: mount,
  getFileSystem: (ctx) => fileSystemView(fileSystem(ctx)),
  listFileSystems: list,
  deleteFileSystem: (ctx) => {
    const fs = fileSystem(ctx);
    if (fs.status === "deleting") repeatedDelete(ctx.state, "file system", fs.id);
    if (fs.mounts.size > 0) {
      throw conflict(
        `file system ${fs.id} has mounts (${[...fs.mounts.keys()].join(", ")}); remove them first`,
      );
    }
    ctx.state.fileSystems.remove(fs, ctx.state.now(), ctx.state.behaviour.fileStorageDelayMs);
    return {};
  },
  deleteFileSystemMount: (ctx) => {
    const fs = fileSystem(ctx);
    const mountId = ctx.params.mountId ?? "";
    const m = fs.mounts.get(mountId);
    if (!m) throw notFound(`mount of file system ${fs.id}`, mountId);
    ctx.state.fileSystems.removeMount(
      fs,
      m,
      ctx.state.now(),
      ctx.state.behaviour.fileStorageDelayMs,
    );
    return {};
  },
} satisfies Record<keyof (typeof KIND_ENDPOINT_TABLES)["filesystem"], Handler>;
