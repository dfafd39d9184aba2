import { z } from "zod";
import {
  CATALOG_LABELS,
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
import { type CrdDefinition, type CustomResource, GROUP, VERSION } from "./definition.js";

/**
 * TrainingProduct (`trainprod`, cluster-scoped, read-only): one training resource
 * specification of a connection's catalog (`list-for-training-task`), mirrored by the
 * operator (src/controllers/catalog). The values are the service's, as it gives them
 * (per-node CPU, memory, GPU and disk are strings in the service's answer).
 */

/** One training resource specification, as the service lists it. */
export const TrainingProductSpec = catalogSpec({
  productCode: productCodeField("TrainingJob"),
  displayName: catalogText("The specification's name in the service (its `name`)."),
  connection: catalogConnectionField,
  computeCenterId: computeCenterField,
  cpuCores: catalogText("CPU cores per node, as the service gives them."),
  memoryGB: catalogText("Memory per node in GB, as the service gives it."),
  gpuModel: catalogText(
    `GPU model (the service's gpuName); absent without GPU. The label ${CATALOG_LABELS.gpuModel} holds it with every character other than letters, digits, . _ - replaced by -, or none.`,
  ),
  gpuCount: catalogText("GPUs per node, as the service gives them."),
  diskGB: catalogText("Disk per node in GB, as the service gives it."),
  ...catalogPriceFields,
  remainingCount: catalogInteger("Units the service had left at the last refresh."),
  ext: z
    .record(z.string(), z.string().max(1024))
    .meta({
      description: "The service's extra entries, e.g. a stock error.",
      maxProperties: 32,
    })
    .optional(),
});
/** One training resource specification. */
export type TrainingProductSpec = z.infer<typeof TrainingProductSpec>;

/** A whole TrainingProduct object. */
export type TrainingProduct = CustomResource<TrainingProductSpec, CatalogStatus>;

/** The TrainingProduct kind (`trainprod`, cluster-scoped, read-only). */
export const trainingProductCrd: CrdDefinition<typeof TrainingProductSpec, typeof CatalogStatus> = {
  group: GROUP,
  version: VERSION,
  kind: "TrainingProduct",
  ...catalogKind,
  plural: "trainingproducts",
  singular: "trainingproduct",
  shortNames: ["trainprod"],
  description:
    "One training resource specification of a connection's catalog (the service's list-for-training-task), mirrored by the operator: its spec.productCode is what a TrainingJob's spec.productCode names. Cluster-scoped and read-only: the operator creates, updates and deletes these objects as the catalog changes; people read them (`kubectl get trainingproducts -l aidc.io/gpu-model=...`).",
  spec: TrainingProductSpec,
  printerColumns: [
    catalogColumns.code("TrainingJob"),
    catalogColumns.center,
    specColumn("GPU", "string", "gpuModel", "GPU model; empty without GPU."),
    specColumn("GPUs", "string", "gpuCount", "GPUs per node."),
    specColumn("CPU", "string", "cpuCores", "CPU cores per node."),
    specColumn("Memory-GB", "string", "memoryGB", "Memory per node in GB."),
    catalogColumns.price,
    specColumn("Remaining", "integer", "remainingCount", "Units left at the last refresh."),
    { ...ageColumn },
    specColumn("Product-Name", "string", "displayName", "The specification's name.", 1),
    specColumn("Disk-GB", "string", "diskGB", "Disk per node in GB.", 1),
    catalogColumns.priceUnit,
    catalogColumns.connection,
  ],
};
