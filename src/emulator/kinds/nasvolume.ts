/**
 * The NasVolume kind's operations in the emulator (gathered by the generated
 * kinds/index.ts): the NAS products and their availability, the asynchronous
 * subscription (capacity within the product's bounds: nasvolume.capacity.ts), scale
 * (body id equal to the path id, the change not the total, never below the used
 * amount), mount path, list, detail, subscription result and delete (at once, or after
 * a release delay: state.ts), and the NAS record on the wire (`nasView`).
 */
import type { KIND_ENDPOINT_TABLES } from "../../service/kinds/index.js";
import {
  nasAvailabilityBodySchema,
  scaleNasBodySchema,
  subscribeNasBodySchema,
  updateNasMountPathBodySchema,
} from "../../service/kinds/nasvolume.js";
import { AIDC_CODES, EMULATOR_TENANT } from "../fixtures.js";
import {
  badRequest,
  conflict,
  fuzzyMatch,
  type Handler,
  type HandlerContext,
  listedRecord,
  pageOfRecords,
  parseBody,
  queryInt,
  queryText,
  recordOfPathId,
  repeatedDelete,
} from "../handler-context.js";
import type { NasRecord } from "../records.js";
import type { EmulatorState } from "../state.js";
import { acceptCreate, subscriptionResult } from "../subscription-results.js";
import { iso } from "../views.js";
import { capacityRefusal } from "./nasvolume.capacity.js";

function nas(ctx: HandlerContext): NasRecord {
  return recordOfPathId(ctx, ctx.state.nas, "NAS storage instance");
}

function subscribe(ctx: HandlerContext): unknown {
  const { state } = ctx;
  const body = parseBody(subscribeNasBodySchema, ctx.body);
  const product = state.nasProducts.find((p) => p.productCode === body.productCode);
  if (!product)
    throw badRequest(
      `unknown productCode ${body.productCode} (see /v1/product/list-for-nas-storage)`,
    );
  const params = body.storageParams ?? {};
  const capacity = Number(params.storageCapacity ?? product.paramValue ?? "100");
  const refusal = capacityRefusal(product, capacity);
  if (refusal) throw badRequest(refusal);
  const now = state.now();
  const key = state.nextSubscriptionKey("nas");
  if (!product.available) {
    const center = AIDC_CODES[product.aidcId ?? 0] ?? `aidc ${product.aidcId}`;
    return acceptCreate(state, "nas", key, now, {
      failed: `NAS product ${product.productCode} cannot be provisioned in ${center} right now`,
    });
  }
  const id = state.nextId("nas");
  const name = params.name || id;
  state.nas.set(id, {
    id,
    name,
    description: params.description ?? "",
    orderInstanceId: `order-${id}`,
    status: "Creating",
    storageType: product.resourceTypeCode ?? "NAS",
    quotaGB: capacity,
    usedGB: 0,
    mountPath: params.mountPath ?? `/mnt/${name.replace(/[^a-zA-Z0-9_]/g, "_")}`,
    productCode: product.productCode ?? body.productCode,
    productName: product.name,
    aidcId: product.aidcId ?? 1,
    tenantId: EMULATOR_TENANT.id,
    createdAt: now,
    updatedAt: now,
    visibleAt: now + state.behaviour.listVisibilityDelayMs,
    ...state.unknownUntilResolved(),
  });
  return acceptCreate(state, "nas", key, now, { instanceId: id });
}

function scale(ctx: HandlerContext): Record<string, never> {
  const body = parseBody(scaleNasBodySchema, ctx.body);
  if (body.id !== ctx.params.id) {
    throw badRequest(`the body id ${body.id} does not equal the path id ${ctx.params.id}`);
  }
  const n = nas(ctx);
  if (n.status !== "Running")
    throw badRequest(`NAS ${n.id} is ${n.status}; it can be scaled once Running`);
  const target =
    body.scaleType === "ScaleUp" ? n.quotaGB + body.capacity : n.quotaGB - body.capacity;
  if (body.scaleType === "ScaleDown" && target < n.usedGB) {
    throw badRequest(`cannot shrink NAS ${n.id} to ${target} GB: ${n.usedGB} GB are used`);
  }
  const product = ctx.state.nasProducts.find((p) => p.productCode === n.productCode);
  const refusal = product ? capacityRefusal(product, target) : target > 0 ? undefined : "";
  if (refusal !== undefined) {
    throw badRequest(
      `cannot ${body.scaleType} NAS ${n.id} by ${body.capacity} GB: ${refusal || `${target} GB`}`,
    );
  }
  if (!ctx.state.scaleNas(n, target)) {
    throw conflict(`a scale of NAS ${n.id} is under way; scale it again once it shows`);
  }
  return {};
}

function list(ctx: HandlerContext): unknown {
  const { state, query } = ctx;
  const name = queryText(query, "name");
  const status = queryText(query, "status")?.toLowerCase();
  const aidcId = queryInt(query, "aidcId");
  const matching: NasRecord[] = [];
  for (const n of state.nas.values()) {
    if (!state.isListed(n) || !fuzzyMatch(n.name, name)) continue;
    if (status !== undefined && n.status.toLowerCase() !== status) continue;
    if (aidcId !== undefined && n.aidcId !== aidcId) continue;
    matching.push(n);
  }
  const page = pageOfRecords(matching, ctx);
  return { ...page, records: page.records.map((n) => listedRecord(nasView(n, state), state)) };
}

/** A NAS instance record, its status word in the letter case of `nasStatusCase`. */
export function nasView(n: NasRecord, state: EmulatorState): Record<string, unknown> {
  const letterCase = state.behaviour.nasStatusCase;
  return {
    id: n.id,
    name: n.name,
    description: n.description,
    orderInstanceId: n.orderInstanceId,
    status:
      letterCase === "upper"
        ? n.status.toUpperCase()
        : letterCase === "lower"
          ? n.status.toLowerCase()
          : n.status,
    storageType: n.storageType,
    quota: String(n.quotaGB),
    used: String(n.usedGB),
    mountPath: n.mountPath,
    resource: { quota: String(n.quotaGB), productName: n.productName, productCode: n.productCode },
    createdTime: iso(n.createdAt),
    lastUpdateTime: iso(n.updatedAt),
    releaseTime: null,
    tenantId: n.tenantId,
    price: "0.30",
    priceUnit: 2,
    currencyUnitOfMeasure: 1,
    currencyUnitPriceFormula: "capacity * price",
    sharePolicy: { policy: "tenant" },
    createdBy: "user-0001",
    createdByName: "Emulated User",
    lastUpdateBy: "user-0001",
    lastUpdateByName: "Emulated User",
    createScene: "",
    createSceneInstanceId: "",
    isDefaultStorage: false,
    aidcId: n.aidcId,
  };
}

/** The NAS operations, by endpoint name. */
export const handlers = {
  subscribeNas: subscribe,
  scaleNas: scale,
  updateNasMountPath: (ctx) => {
    const body = parseBody(updateNasMountPathBodySchema, ctx.body);
    const n = nas(ctx);
    n.mountPath = body.mountPath;
    n.updatedAt = ctx.state.now();
    return {};
  },
  getNasSubscriptionResult: (ctx) => subscriptionResult(ctx.state, ctx.params.key ?? "", "nas"),
  listNas: list,
  getNas: (ctx) => nasView(nas(ctx), ctx.state),
  deleteNas: (ctx) => {
    const n = nas(ctx);
    if (n.status === "Releasing") repeatedDelete(ctx.state, "NAS storage instance", n.id);
    ctx.state.deleteNas(n.id);
    return {};
  },
  listNasProducts: (ctx) => {
    const aidcId = queryInt(ctx.query, "aidcId");
    return ctx.state.nasProducts
      .filter((p) => aidcId === undefined || p.aidcId === aidcId)
      .map(({ available: _, ...wire }) => wire);
  },
  isNasProductAvailable: (ctx) => {
    const body = parseBody(nasAvailabilityBodySchema, ctx.body);
    const aidcId =
      body.aidcId ??
      Number(
        Object.entries(AIDC_CODES).find(([, code]) => code === body.aidcCode)?.[0] ?? Number.NaN,
      );
    // resourceSpecCode is matched against the product code (the spec does not say which code it is).
    const product = ctx.state.nasProducts.find(
      (p) => p.productCode === body.resourceSpecCode && p.aidcId === aidcId,
    );
    return product?.available ?? false;
  },
} satisfies Record<keyof (typeof KIND_ENDPOINT_TABLES)["nasvolume"], Handler>;
