/**
 * Block volume operations of the service client (see client-core.ts for how the client
 * is assembled).
 */

import { emptyData } from "./client-core.js";
import {
  type JsonObject,
  jsonObjectBodySchema,
  type StorageObject,
  storageObjectSchema,
} from "./schemas/block-file-storage.js";
import { StorageOperations } from "./storage-operations.js";

/** Block volumes: create, attach, detach, delete. */
export class BlockVolumeOperations extends StorageOperations {
  /** Creates a block volume. */
  async createVolume(body: JsonObject): Promise<StorageObject> {
    return this.call(
      "createVolume",
      { body: this.validBody("createVolume", jsonObjectBodySchema, body) },
      storageObjectSchema,
    );
  }

  /** Attaches volume `id` to an instance. */
  async attachVolume(id: string, body: JsonObject): Promise<StorageObject> {
    const checked = this.validBody("attachVolume", jsonObjectBodySchema, body);
    return this.call("attachVolume", { params: { id }, body: checked }, storageObjectSchema);
  }

  /** Detaches volume `id`. */
  async detachVolume(id: string, body: JsonObject = {}): Promise<StorageObject> {
    const checked = this.validBody("detachVolume", jsonObjectBodySchema, body);
    return this.call("detachVolume", { params: { id }, body: checked }, storageObjectSchema);
  }

  /** Deletes volume `id`. */
  async deleteVolume(id: string): Promise<void> {
    return this.call("deleteVolume", { params: { id } }, emptyData);
  }
}
