/**
 * The FileSystem kind's service operations: the two creates the spec lists ("File
 * storage: POST /v1/file-systems, POST /v1/file-systems/{id}/mounts.") and the detail,
 * list and deletes this project assumes (docs/service-assumptions.md, "File systems and
 * mounts"), with their request bodies (the records they answer: schemas/file-systems.ts).
 * `endpoints` joins the endpoint table (gathered by the generated index.ts);
 * {@link FileSystemOperations} calls them through any {@link OperationCaller} (an
 * account's calls, `AccountCalls`).
 */
import { z } from "zod";
import { assumed, documented, type EndpointDeclarations } from "../endpoint-definition.js";
import type { OperationCaller } from "../operation-caller.js";
import {
  idsCarryingToken,
  type ListedIds,
  listIdentities,
  type PageWalkEnd,
  paginate,
  walkProvesTokenAbsent,
} from "../pagination.js";
import { type Page, pageOf } from "../schemas/data.js";
import {
  type CreatedObject,
  createdObjectSchema,
  type FileSystem,
  fileSystemSchema,
} from "../schemas/file-systems.js";

/** Body of `POST /v1/file-systems` (assumed shape). */
export const createFileSystemBodySchema = z.object({
  name: z.string().min(1).max(128),
  description: z.string().max(2048).optional(),
  sizeGB: z.int().min(1),
  type: z.string().min(1).optional(),
  protocol: z.string().min(1).optional(),
  aidcId: z.int().min(0).optional(),
});

/** A file system create request. */
export type CreateFileSystemRequest = z.infer<typeof createFileSystemBodySchema>;

/** Body of `POST /v1/file-systems/{id}/mounts` (assumed shape). */
export const createFileSystemMountBodySchema = z.object({
  instanceId: z.string().min(1),
  mountPath: z.string().min(1).optional(),
});

/** A mount create request. */
export type CreateFileSystemMountRequest = z.infer<typeof createFileSystemMountBodySchema>;

/** Query of the (assumed) file system list. */
export interface FileSystemListQuery {
  pageNo?: number;
  pageSize?: number;
  /** Narrows the list by name (the emulator: a case-insensitive substring). */
  name?: string;
}

/**
 * The file system operations. The reads and deletes are assumed; unlike the deletes of
 * tasks, NAS and templates, these deletes are on by default: a file system with mounts
 * cannot be deleted, and a mount removed from a spec needs one. A service without them
 * answers a bare 404, which the FileSystem controller reports.
 */
export const endpoints = {
  createFileSystem: documented("POST", "/v1/file-systems", false),
  createFileSystemMount: documented("POST", "/v1/file-systems/{id}/mounts", false),
  getFileSystem: assumed("GET", "/v1/file-systems/{id}", true),
  listFileSystems: assumed("GET", "/v1/file-systems", true),
  deleteFileSystem: assumed("DELETE", "/v1/file-systems/{id}", true),
  deleteFileSystemMount: assumed("DELETE", "/v1/file-systems/{id}/mounts/{mountId}", true),
} as const satisfies EndpointDeclarations;

/** Data of the deletes: ignored. */
const ignored = z.unknown().transform((): void => undefined);

/** File systems and their mounts, called through `caller`. */
export class FileSystemOperations {
  constructor(private readonly caller: OperationCaller) {}

  /**
   * Creates a file system (never retried blindly); answers its id when the service
   * says it. The client token travels in `description` (schemas/create.ts).
   */
  async create(req: CreateFileSystemRequest): Promise<CreatedObject> {
    const body = this.caller.checkedBody("createFileSystem", createFileSystemBodySchema, req);
    return this.caller.request("createFileSystem", { body }, createdObjectSchema);
  }

  /** One file system by id, with its mounts; `ServiceNotFoundError` when it does not exist. */
  get(id: string): Promise<FileSystem> {
    return this.caller.request("getFileSystem", { params: { id } }, fileSystemSchema);
  }

  /** One page of the file system list. */
  list(query: FileSystemListQuery = {}): Promise<Page<FileSystem>> {
    return this.caller.request(
      "listFileSystems",
      { query: { ...query } },
      pageOf(fileSystemSchema),
    );
  }

  /** Every file system matching `query`, page by page (the walk returns whether it was complete). */
  iterate(
    query: Omit<FileSystemListQuery, "pageNo"> = {},
  ): AsyncGenerator<FileSystem, PageWalkEnd, undefined> {
    return paginate(
      (pageNo, pageSize) => this.list({ ...query, pageNo, pageSize }),
      (fs) => fs.id,
      query.pageSize,
    );
  }

  /** The ids of every file system, from a walk of the whole list; undefined when the list is disabled. */
  listIds(): Promise<ListedIds | undefined> {
    if (this.caller.operationState("listFileSystems") === "disabled") {
      return Promise.resolve(undefined);
    }
    return listIdentities(this.iterate(), (fs) => fs.id);
  }

  /**
   * Whether one walk of the whole file system list, started now, proves that no file
   * system carries `token` (`walkProvesTokenAbsent`); undefined when the list is disabled.
   */
  async provesTokenAbsent(token: string): Promise<boolean | undefined> {
    if (this.caller.operationState("listFileSystems") === "disabled") return undefined;
    return walkProvesTokenAbsent(this.iterate(), token);
  }

  /**
   * Ids of the file systems whose description carries the marker of `token`, or
   * undefined when the list is disabled. `name` narrows the list first.
   */
  async findIdsByClientToken(token: string, name?: string): Promise<string[] | undefined> {
    if (this.caller.operationState("listFileSystems") === "disabled") return undefined;
    return idsCarryingToken(this.iterate(name === undefined ? {} : { name }), token, (fs) => fs.id);
  }

  /** Deletes a file system (the service refuses one that still has mounts). */
  delete(id: string): Promise<void> {
    return this.caller.request("deleteFileSystem", { params: { id } }, ignored);
  }

  /** Mounts file system `id` on an instance (never retried blindly); answers the mount's id when said. */
  async mount(id: string, req: CreateFileSystemMountRequest): Promise<CreatedObject> {
    const body = this.caller.checkedBody(
      "createFileSystemMount",
      createFileSystemMountBodySchema,
      req,
    );
    return this.caller.request(
      "createFileSystemMount",
      { params: { id }, body },
      createdObjectSchema,
    );
  }

  /** Removes mount `mountId` of file system `id`. */
  unmount(id: string, mountId: string): Promise<void> {
    return this.caller.request("deleteFileSystemMount", { params: { id, mountId } }, ignored);
  }
}
