import { z } from "zod";
import {
  type CatalogStatus,
  catalogColumns,
  catalogConnectionField,
  catalogInteger,
  catalogKind,
  catalogPriceFields,
  catalogSpec,
  catalogText,
  computeCenterField,
  productCodeField,
  specColumn,
} from "./catalog.js";
import { ageColumn } from "./columns.js";
import {
  type CrdDefinition,
  type CustomResource,
  described,
  GROUP,
  VERSION,
} from "./definition.js";

/**
 * NasProduct (`nasprod`, cluster-scoped, read-only): one NAS storage product of a
 * connection's catalog (`list-for-nas-storage`) with the service's
 * `nas-storage-available` answer, mirrored by the operator (src/controllers/catalog).
 */

/** One NAS storage product, as the service lists it. */
export const NasProductSpec = catalogSpec({
  productCode: productCodeField("NasVolume"),
  displayName: catalogText("The product's name in the service (its `name`)."),
  connection: catalogConnectionField,
  computeCenterId: computeCenterField,
  resourceTypeCode: catalogText("The service's resourceTypeCode."),
  resourceSpecParamCode: catalogText("The service's resourceSpecParamCode."),
  defaultCapacity: catalogText(
    "Default capacity (the service's paramValue, GB). Without bounds it is the only capacity allowed.",
  ),
  capacityUnit: catalogInteger("The service's paramUnit."),
  minCapacityGB: catalogInteger("Smallest capacity in GB (paramValueMin); absent: no minimum."),
  maxCapacityGB: catalogInteger("Largest capacity in GB (paramValueMax); absent: no maximum."),
  ...catalogPriceFields,
  currencyUnitOfMeasure: catalogInteger("The service's currencyUnitOfMeasure."),
  currencyUnitPriceFormula: catalogText("The service's currencyUnitPriceFormula.", 1024),
  available: described(
    z.boolean(),
    "The service's nas-storage-available answer for this product in its compute center at the last refresh: whether a NAS of it can be provisioned now. Absent when the service has no such operation or did not answer.",
  ).optional(),
});
/** One NAS storage product. */
export type NasProductSpec = z.infer<typeof NasProductSpec>;

/** A whole NasProduct object. */
export type NasProduct = CustomResource<NasProductSpec, CatalogStatus>;

/** The NasProduct kind (`nasprod`, cluster-scoped, read-only). */
export const nasProductCrd: CrdDefinition<typeof NasProductSpec, typeof CatalogStatus> = {
  group: GROUP,
  version: VERSION,
  kind: "NasProduct",
  ...catalogKind,
  plural: "nasproducts",
  singular: "nasproduct",
  shortNames: ["nasprod"],
  description:
    "One NAS storage product of a connection's catalog (the service's list-for-nas-storage), with its capacity bounds and the service's last nas-storage-available answer, mirrored by the operator: its spec.productCode is what a NasVolume's spec.productCode names. Cluster-scoped and read-only: the operator creates, updates and deletes these objects as the catalog changes; people read them.",
  spec: NasProductSpec,
  printerColumns: [
    catalogColumns.code("NasVolume"),
    catalogColumns.center,
    specColumn("Min-GB", "integer", "minCapacityGB", "Smallest capacity in GB."),
    specColumn("Max-GB", "integer", "maxCapacityGB", "Largest capacity in GB."),
    specColumn("Default", "string", "defaultCapacity", "Default capacity in GB."),
    catalogColumns.price,
    specColumn("Available", "boolean", "available", "Whether the service can provision it now."),
    { ...ageColumn },
    specColumn("Product-Name", "string", "displayName", "The product's name.", 1),
    catalogColumns.priceUnit,
    catalogColumns.connection,
  ],
};
