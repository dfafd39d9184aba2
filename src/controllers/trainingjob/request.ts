/**
 * The create request of a TrainingJob's task and the preflight check before it, as
 * pure functions. Wire spellings (`trainingFramwork`, letter cases) are the client's
 * business: this builds the client's caller-side request.
 */
import { TRAINING_JOB_REASONS } from "../../crds/trainingjob.js";
import type { CreateTrainingTaskRequest, TrainingProduct } from "../../service/index.js";
import { CLIENT_TOKEN_ENV, OWNER_MARK_ENV } from "../../service/index.js";
import { closestCodes, closestCodesText } from "../catalog/closest-codes.js";
import { productListCommand } from "../catalog/naming.js";
import type { PreflightRefusal, ResolvedCall } from "../managed/call.js";
import { formatOwnerMark, ownerMark, rawMountRefusal } from "../managed/tenancy.js";
import { effectiveConfig } from "./inherited-fields.js";
import type { TrainingJobObject } from "./objects.js";
import type { ResolvedReferences, TrainingJobRefs } from "./references.js";

const R = TRAINING_JOB_REASONS.names;

/** The task's name in the service: `spec.taskName`, else metadata.name. */
export function taskNameOf(job: TrainingJobObject): string {
  return job.spec.taskName ?? job.metadata?.name ?? "";
}

/** The fields the service requires that neither the spec nor its source gave. */
export type MissingFields = ("image" | "productCode" | "workerCount")[];

/** The create request, or the required fields that are missing. */
export type CreateRequestResult =
  | { ok: true; request: CreateTrainingTaskRequest }
  | { ok: false; missing: MissingFields };

/**
 * Builds the create request from the job's effective configuration (its own fields,
 * else the template's or source job's, else the service's default priority 3: see
 * {@link effectiveConfig}); the resolved storage mounts; the client token and the owner
 * mark as the env vars {@link CLIENT_TOKEN_ENV} and {@link OWNER_MARK_ENV} (over the
 * user's env); `templateId` / `sourceTaskId` for TEMPLATE / COPY. Absent optional
 * fields are left out.
 */
export function buildCreateRequest(
  job: TrainingJobObject,
  refs: ResolvedReferences,
  token: string,
): CreateRequestResult {
  const spec = job.spec;
  // The storage list arrives resolved (refs.storageConfigs); every other field of
  // the configuration goes to the request under its own name.
  const {
    image,
    productCode,
    workerCount,
    env,
    storage: _,
    ...configured
  } = effectiveConfig(spec, refs.inherited);
  const missing: MissingFields = [];
  if (!image) missing.push("image");
  if (!productCode) missing.push("productCode");
  if (workerCount === undefined) missing.push("workerCount");
  if (!image || !productCode || workerCount === undefined) return { ok: false, missing };
  const optional: Partial<CreateTrainingTaskRequest> = {
    desc: spec.description,
    ...configured,
    templateId: refs.templateId,
    sourceTaskId: refs.sourceTaskId,
  };
  const request: CreateTrainingTaskRequest = {
    name: taskNameOf(job),
    createType: spec.createType,
    productCode,
    workerCount,
    image,
    env: {
      ...(env ?? {}),
      ...(refs.bucketEnv ?? {}),
      [CLIENT_TOKEN_ENV]: token,
      [OWNER_MARK_ENV]: formatOwnerMark(
        ownerMark(job.metadata?.namespace ?? "", job.metadata?.name ?? ""),
      ),
    },
  };
  if (refs.storageConfigs.length > 0) request.storageConfigs = refs.storageConfigs;
  for (const [k, v] of Object.entries(optional)) {
    if (v !== undefined) (request as unknown as Record<string, unknown>)[k] = v;
  }
  return { ok: true, request };
}

/**
 * Checks the product before ordering: an unknown product code is refused (only a new
 * TrainingJob can fix it: productCode is immutable); fewer remaining units than
 * workers waits and polls, since capacity may come back. Undefined: go ahead. The hints
 * list the catalog of the object's `connection` (undefined: the default) alone.
 */
export function checkTrainingProduct(
  products: readonly TrainingProduct[],
  productCode: string,
  workerCount: number,
  connection?: string,
): PreflightRefusal | undefined {
  const list = productListCommand("trainingproducts", connection);
  const product = products.find((p) => p.productCode === productCode);
  if (!product) {
    const known = products.flatMap((p) =>
      p.productCode ? [{ code: p.productCode, aidcId: p.aidcId }] : [],
    );
    const closest = closestCodesText(closestCodes(productCode, known), list);
    return {
      reason: R.UnknownProductRefused,
      message: `productCode ${productCode} is not in the service's training product list (${closest}); create a TrainingJob with a listed product`,
    };
  }
  const remaining = product.remainingCount;
  if (remaining !== undefined && remaining < workerCount) {
    return {
      reason: R.InsufficientCapacity,
      message: `product ${productCode} has ${remaining} units left, fewer than spec.workerCount (${workerCount}); no order is placed until enough are available (REMAINING of ${list})`,
      retry: true,
    };
  }
  return undefined;
}

/**
 * The create request from the resolved references (`call.refs`), or a refusal: raw
 * `storageId` mounts (the job's own or inherited) of storages that no Ready NasVolume
 * of the job's namespace is bound to, unless the namespace may adopt; or fields the
 * create needs that neither the spec nor the template or source job sets.
 */
export function prepareCreate(
  call: ResolvedCall<TrainingJobObject, TrainingJobRefs>,
  token: string,
  adoptionNamespaces: readonly string[],
) {
  const refs = call.refs;
  const raw = (effectiveConfig(call.obj.spec, refs.inherited).storage ?? []).flatMap((m) =>
    m.nasVolumeRef === undefined && m.storageId ? [m.storageId] : [],
  );
  const ns = call.obj.metadata?.namespace ?? "";
  const adoption =
    raw.length > 0 ? rawMountRefusal(ns, raw, refs.ownStorageIds(), adoptionNamespaces) : undefined;
  if (adoption) return { refusal: adoption satisfies PreflightRefusal };
  const built = buildCreateRequest(call.obj, refs, token);
  if (!built.ok) {
    return {
      refusal: {
        reason: R.MissingFieldsInvalidSpec,
        message: `${built.missing.join(", ")} must be set in the spec (or come from the template or source job)`,
      } satisfies PreflightRefusal,
    };
  }
  return { request: built.request };
}
