/**
 * What the two catalog kinds (TrainingProduct, NasProduct) share: their labels, their
 * common fields and columns, and their status. A catalog object is one product of one
 * connection's catalog, mirrored by the operator; people read it, the operator alone
 * writes it (docs/custom-resources.md, "Finding a product code").
 */
import { z } from "zod";
import { type CrdDefinition, described, type PrinterColumn } from "./definition.js";
import { INTEGER_LIMITS } from "./fields.js";

/** The labels of a catalog object. */
export const CATALOG_LABELS = {
  /** The ServiceConnection the product is of, or {@link DEFAULT_CONNECTION_LABEL_VALUE}. */
  connection: "aidc.io/connection",
  /** The compute center id (`aidcId`) of the product. */
  computeCenter: "aidc.io/compute-center",
  /** A TrainingProduct's GPU model as a label value (`none` without GPU). */
  gpuModel: "aidc.io/gpu-model",
} as const;

/**
 * The `aidc.io/connection` label of the default connection's products. It holds a `_`,
 * which no ServiceConnection name can, so it never names a ServiceConnection's products.
 */
export const DEFAULT_CONNECTION_LABEL_VALUE = "default_connection";

/** `spec.connection`: the ServiceConnection whose catalog the product is in. */
export const catalogConnectionField = described(
  z.string().min(1).max(253),
  "Name of the ServiceConnection whose catalog this product is in; absent for the operator's default connection (label aidc.io/connection=default_connection).",
).optional();

/**
 * An integer of the service's answer, at most {@link INTEGER_LIMITS}.id (a 32-bit
 * integer, as every spec integer of the kinds).
 */
export function catalogInteger(description: string) {
  return described(
    z.number().int().max(INTEGER_LIMITS.id),
    `${description} At most ${INTEGER_LIMITS.id}.`,
  ).optional();
}

/** `spec.computeCenterId`: the product's compute center (`aidcId`). */
export const computeCenterField = catalogInteger(
  "Compute center of the product (the service's aidcId); also the label aidc.io/compute-center.",
);

/** `spec.productCode`: the code a TrainingJob or NasVolume names. */
export const productCodeField = (kind: string) =>
  described(
    z.string().min(1).max(256),
    `The product's code: the value of a ${kind}'s spec.productCode.`,
  );

/** A text of the service's answer, optional. */
export function catalogText(description: string, max = 256) {
  return described(z.string().max(max), description).optional();
}

/** `spec.price` and `spec.priceUnit`: the product's unit price, as the service gives it. */
export const catalogPriceFields = {
  price: catalogText("Unit price, without unit."),
  priceUnit: catalogInteger("Code of the price's unit (the service's unit_of_measure dictionary)."),
};

/** The spec of a catalog kind: `shape`, the product's fields as the service lists them. */
export function catalogSpec<Shape extends z.ZodRawShape>(shape: Shape) {
  return z.object(shape).meta({
    description:
      "The product as the service lists it, copied by the operator at each refresh; hand edits are put back.",
  });
}

/** A printer column of a spec field (`priority` 1: only with `-o wide`). */
export function specColumn(
  name: string,
  type: PrinterColumn["type"],
  field: string,
  description: string,
  priority?: number,
): PrinterColumn {
  return { name, type, jsonPath: `.spec.${field}`, description, ...(priority ? { priority } : {}) };
}

/** The columns of the fields every catalog kind has; a kind places them among its own. */
export const catalogColumns = {
  code: (kind: string) =>
    specColumn("Code", "string", "productCode", `The product code a ${kind} names.`),
  center: specColumn("Center", "integer", "computeCenterId", "Compute center (aidcId)."),
  price: specColumn("Price", "string", "price", "Unit price."),
  priceUnit: specColumn("Price-Unit", "integer", "priceUnit", "Code of the price's unit.", 1),
  connection: specColumn(
    "Connection",
    "string",
    "connection",
    "ServiceConnection; empty: the default.",
    1,
  ),
};

/** The status of a catalog object: only the echo of a reconcile-now request. */
export const CatalogStatus = z
  .object({
    lastHandledReconcileAt: described(
      z.string().max(256),
      "The value of this product's annotation aidc.io/reconcile-requested-at that the operator last refreshed the connection's catalogs for (a new value on the product or on its ServiceConnection refreshes them; the ServiceConnection's own status echoes its value once its key is checked).",
    ).optional(),
  })
  .meta({
    description:
      "Written by the operator only to echo a reconcile-now request; the product's data is in spec.",
  });
/** The status of a catalog object. */
export type CatalogStatus = z.infer<typeof CatalogStatus>;

/**
 * What every catalog kind's definition says alike: cluster-scoped, in the category
 * `aidc-catalog`, no remote resource of its own (the operator mirrors the catalog),
 * nothing immutable, and {@link CatalogStatus}.
 */
export const catalogKind: Pick<
  CrdDefinition<z.ZodType, typeof CatalogStatus>,
  "remote" | "mutability" | "namespaced" | "categories" | "status"
> = {
  remote: "none",
  mutability: [],
  namespaced: false,
  categories: ["aidc-catalog"],
  status: CatalogStatus,
};
