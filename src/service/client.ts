/**
 * The typed client of the Compute and Storage Service: one method per operation of the
 * endpoint table, each returning the operation's data parsed into a TypeScript type.
 * Every failure is a `ServiceError` subclass (see errors.ts). Controllers hold one
 * client, built from the operator configuration, and never call fetch themselves.
 *
 * The operations are grouped by concern in training-operations.ts and
 * storage-operations.ts; this file adds the CCI operations and is the one to import.
 * A kind with a module of its own in ./kinds calls its operations through `request`
 * (e.g. kinds/blockvolume.ts, kinds/filesystem.ts).
 */
import { DEFAULT_ITERATION_PAGE_SIZE, paginate } from "./pagination.js";
import {
  type CciErrorDetails,
  type CciInstance,
  type CciListQuery,
  cciErrorDetailsSchema,
  cciInstanceSchema,
  type SaveCciImageRequest,
  type SaveCciImageResult,
  saveCciImageBodySchema,
  saveCciImageResultSchema,
} from "./schemas/cci.js";
import { type Page, pageOf } from "./schemas/envelope.js";
import { StorageOperations } from "./storage-operations.js";

export type { ServiceClientOptions } from "./client-core.js";

/** The service API client. See the module comment. */
export class ServiceClient extends StorageOperations {
  // --- CCI ---------------------------------------------------------------------------

  /** One page of CCI instances. */
  async listCci(query: CciListQuery = {}): Promise<Page<CciInstance>> {
    return this.call("listCci", { query: { ...query } }, pageOf(cciInstanceSchema));
  }

  /** Every CCI instance matching `query`, page by page (page size default 50). */
  iterateCci(query: Omit<CciListQuery, "pageNo"> = {}): AsyncGenerator<CciInstance> {
    const size = query.pageSize ?? DEFAULT_ITERATION_PAGE_SIZE;
    return paginate(
      (pageNo, pageSize) => this.listCci({ ...query, pageNo, pageSize }),
      (cci) => cci.id,
      size,
    );
  }

  /** One CCI instance in detail. */
  async getCci(id: string): Promise<CciInstance> {
    return this.call("getCci", { params: { id } }, cciInstanceSchema);
  }

  /** Why a CCI instance failed. */
  async getCciErrorDetails(id: string): Promise<CciErrorDetails> {
    return this.call("getCciErrorDetails", { params: { id } }, cciErrorDetailsSchema);
  }

  /** Saves a CCI instance as an image (never retried blindly); returns the image id. */
  async saveCciImage(id: string, req: SaveCciImageRequest): Promise<SaveCciImageResult> {
    const body = this.validBody("saveCciImage", saveCciImageBodySchema, {
      imageName: req.imageName,
      tag: req.tag,
    });
    return this.call("saveCciImage", { params: { id }, body }, saveCciImageResultSchema);
  }
}
