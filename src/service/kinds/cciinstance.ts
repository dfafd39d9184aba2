/**
 * The CciInstance kind's service operations, all documented by the spec: the list and
 * detail of CCI instances, why one failed, and saving one as an image, with the
 * save-image body and the list query (the records they answer: schemas/cci.ts).
 * `endpoints` joins the endpoint table (generated kinds/index.ts); the account's calls
 * (`AccountCalls`) hold one {@link CciOperations}.
 */
import { z } from "zod";
import { documented, type EndpointDeclarations } from "../endpoint-definition.js";
import type { OperationCaller } from "../operation-caller.js";
import { paginate } from "../pagination.js";
import {
  type CciErrorDetails,
  type CciInstance,
  cciErrorDetailsSchema,
  cciInstanceSchema,
  type SaveCciImageResult,
  saveCciImageResultSchema,
} from "../schemas/cci.js";
import { type Page, pageOf } from "../schemas/data.js";

/** The CCI operations of the endpoint table. */
export const endpoints = {
  listCci: documented("GET", "/v1/cci/instance/list", true),
  getCci: documented("GET", "/v1/cci/instance/{id}", true),
  getCciErrorDetails: documented("GET", "/v1/cci/instance/{id}/error-details", true),
  saveCciImage: documented("POST", "/v1/cci/instance/{id}/save-image", false),
} as const satisfies EndpointDeclarations;

/** Body of POST /v1/cci/instance/{id}/save-image. */
export const saveCciImageBodySchema = z.object({
  imageName: z.string().min(1),
  tag: z.string().min(1),
});

/** The image to save an instance as. */
export type SaveCciImageRequest = z.infer<typeof saveCciImageBodySchema>;

/** Query of the CCI list; every parameter optional. */
export interface CciListQuery {
  /** From 1. */
  pageNo?: number;
  pageSize?: number;
  /** Fuzzy match on the name. */
  name?: string;
  tenantId?: string;
  status?: string;
  id?: string;
  orderInstanceId?: string;
  aidcId?: number;
}

/** CCI instances, called through `caller`. */
export class CciOperations {
  constructor(private readonly caller: OperationCaller) {}

  /** One page of CCI instances. */
  page(query: CciListQuery = {}): Promise<Page<CciInstance>> {
    return this.caller.request("listCci", { query: { ...query } }, pageOf(cciInstanceSchema));
  }

  /** Every CCI instance matching `query`, page by page. */
  iterate(query: Omit<CciListQuery, "pageNo"> = {}): AsyncGenerator<CciInstance> {
    return paginate(
      (pageNo, pageSize) => this.page({ ...query, pageNo, pageSize }),
      (cci) => cci.id,
      query.pageSize,
    );
  }

  /** One CCI instance in detail. */
  get(id: string): Promise<CciInstance> {
    return this.caller.request("getCci", { params: { id } }, cciInstanceSchema);
  }

  /** Why a CCI instance failed. */
  errorDetails(id: string): Promise<CciErrorDetails> {
    return this.caller.request("getCciErrorDetails", { params: { id } }, cciErrorDetailsSchema);
  }

  /** Saves a CCI instance as an image (never retried blindly); returns the image id. */
  async saveImage(id: string, req: SaveCciImageRequest): Promise<SaveCciImageResult> {
    const body = this.caller.checkedBody("saveCciImage", saveCciImageBodySchema, {
      imageName: req.imageName,
      tag: req.tag,
    });
    return this.caller.request("saveCciImage", { params: { id }, body }, saveCciImageResultSchema);
  }
}
