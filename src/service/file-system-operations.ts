/**
 * File system operations of the service client (see client-core.ts for how the client
 * is assembled): the two creates the spec lists, and the detail, list and deletes this
 * project assumes (docs/service-assumptions.md, "File systems and mounts").
 */

import { BlockVolumeOperations } from "./block-volume-operations.js";
import { emptyData } from "./client-core.js";
import { clientTokenInDescription } from "./client-token.js";
import { type ListedIds, listIdentities, type PageWalkEnd, paginate } from "./pagination.js";
import { type Page, pageOf } from "./schemas/envelope.js";
import {
  type CreatedObject,
  type CreateFileSystemMountRequest,
  type CreateFileSystemRequest,
  createdObjectSchema,
  createFileSystemBodySchema,
  createFileSystemMountBodySchema,
  type FileSystem,
  type FileSystemListQuery,
  fileSystemSchema,
} from "./schemas/file-systems.js";

/** File systems and their mounts. */
export class FileSystemOperations extends BlockVolumeOperations {
  /**
   * Creates a file system (never retried blindly); answers its id when the service
   * says it. The client token travels in `description` (client-token.ts).
   */
  async createFileSystem(req: CreateFileSystemRequest): Promise<CreatedObject> {
    const body = this.validBody("createFileSystem", createFileSystemBodySchema, req);
    return this.call("createFileSystem", { body }, createdObjectSchema);
  }

  /** One file system by id, with its mounts (assumed); `ServiceNotFoundError` when it does not exist. */
  async getFileSystem(id: string): Promise<FileSystem> {
    return this.call("getFileSystem", { params: { id } }, fileSystemSchema);
  }

  /** One page of the file system list (assumed). */
  async listFileSystems(query: FileSystemListQuery = {}): Promise<Page<FileSystem>> {
    return this.call("listFileSystems", { query: { ...query } }, pageOf(fileSystemSchema));
  }

  /** Every file system matching `query`, page by page (the walk returns whether it was complete). */
  iterateFileSystems(
    query: Omit<FileSystemListQuery, "pageNo"> = {},
  ): AsyncGenerator<FileSystem, PageWalkEnd, undefined> {
    return paginate(
      (pageNo, pageSize) => this.listFileSystems({ ...query, pageNo, pageSize }),
      (fs) => fs.id,
      query.pageSize,
    );
  }

  /** The ids of every file system, from a walk of the whole list; undefined when the list is disabled. */
  async listFileSystemIds(): Promise<ListedIds | undefined> {
    if (!this.isEndpointEnabled("listFileSystems")) return undefined;
    return listIdentities(this.iterateFileSystems(), (fs) => fs.id);
  }

  /**
   * Ids of the file systems whose description carries the marker of `token`, or
   * undefined when the list is disabled. `name` narrows the list first.
   */
  async findFileSystemIdsByClientToken(
    token: string,
    name?: string,
  ): Promise<string[] | undefined> {
    if (!this.isEndpointEnabled("listFileSystems")) return undefined;
    const ids: string[] = [];
    for await (const fs of this.iterateFileSystems(name === undefined ? {} : { name })) {
      if (clientTokenInDescription(fs.description) === token) ids.push(fs.id);
    }
    return ids;
  }

  /** Deletes a file system (assumed; the service refuses one that still has mounts). */
  async deleteFileSystem(id: string): Promise<void> {
    return this.call("deleteFileSystem", { params: { id } }, emptyData);
  }

  /** Mounts file system `id` on an instance (never retried blindly); answers the mount's id when said. */
  async createFileSystemMount(
    id: string,
    req: CreateFileSystemMountRequest,
  ): Promise<CreatedObject> {
    const body = this.validBody("createFileSystemMount", createFileSystemMountBodySchema, req);
    return this.call("createFileSystemMount", { params: { id }, body }, createdObjectSchema);
  }

  /** Removes mount `mountId` of file system `id` (assumed). */
  async deleteFileSystemMount(id: string, mountId: string): Promise<void> {
    return this.call("deleteFileSystemMount", { params: { id, mountId } }, emptyData);
  }
}
