/**
 * Product catalog operations of the emulator: training specifications, NAS products,
 * and the NAS availability check.
 */
import type { EndpointName } from "../../service/endpoints.js";
import { nasAvailabilityBodySchema } from "../../service/schemas/products.js";
import { AIDC_CODES } from "../fixtures.js";
import { type Handler, parseBody, queryInt } from "../handler-context.js";

/** The catalog operations, by endpoint name. */
export const catalogHandlers = {
  listTrainingProducts: (ctx) => {
    const aidcId = queryInt(ctx.query, "aidcId");
    return ctx.state.trainingProducts.filter((p) => aidcId === undefined || p.aidcId === aidcId);
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
} satisfies Partial<Record<EndpointName, Handler>>;
