/**
 * The custom resources of the operator (docs/custom-resources.md): one zod source of truth per kind
 * for spec, status and CRD metadata. Controllers use the types; the generator renders
 * the CustomResourceDefinitions from {@link allCrds}.
 */
import { blockVolumeCrd } from "./blockvolume.js";
import { bucketCrd } from "./bucket.js";
import { cciInstanceCrd } from "./cciinstance.js";
import type { CrdDefinition } from "./definition.js";
import { fileSystemCrd } from "./filesystem.js";
import { nasProductCrd } from "./nasproduct.js";
import { nasVolumeCrd } from "./nasvolume.js";
import { ReasonTable } from "./reason-table.js";
import { serviceConnectionCrd } from "./serviceconnection.js";
import { trainingJobCrd } from "./trainingjob.js";
import { trainingProductCrd } from "./trainingproduct.js";
import { trainingTemplateCrd } from "./trainingtemplate.js";

export * from "./blockvolume.js";
export * from "./bucket.js";
export * from "./catalog.js";
export * from "./cciinstance.js";
export * from "./conditions.js";
export * from "./definition.js";
export * from "./fields.js";
export * from "./filesystem.js";
export * from "./manifest.js";
export * from "./mutability.js";
export * from "./nasproduct.js";
export * from "./nasvolume.js";
export * from "./reason-table.js";
export * from "./reasons.js";
export * from "./serviceconnection.js";
export * from "./training.js";
export * from "./trainingjob.js";
export * from "./trainingproduct.js";
export * from "./trainingtemplate.js";

/** Every kind, in the order the generator writes them. */
export const allCrds: readonly CrdDefinition[] = [
  trainingJobCrd,
  nasVolumeCrd,
  cciInstanceCrd,
  trainingTemplateCrd,
  serviceConnectionCrd,
  bucketCrd,
  fileSystemCrd,
  blockVolumeCrd,
  trainingProductCrd,
  nasProductCrd,
];

/**
 * The catalog kinds: read-only mirrors of the service's product catalogs that the
 * operator writes (src/controllers/catalog); no user creates them, none has a sample.
 */
export const catalogCrds: readonly CrdDefinition[] = [trainingProductCrd, nasProductCrd];

/**
 * The reason table of every kind that writes conditions (all but the catalogs, whose
 * status is only a reconcile-now echo): the shared reasons and each kind's own
 * (reason-table.ts).
 */
export const REASONS = new ReasonTable(allCrds.filter((c) => !catalogCrds.includes(c)));
