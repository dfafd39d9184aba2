/**
 * The CRD module `npm run new-kind` writes (src/crds/<kind>.ts): the zod source of truth
 * of the kind's spec and status, its immutable fields, its own reasons, its Argo CD
 * states and printer columns. Every `TODO(<Kind>)` marks what the author decides.
 */
import type { KindNames } from "./names.js";

/** The content of src/crds/<lower>.ts. */
export function crdModule(n: KindNames): string {
  return `/**
 * The ${n.kind} kind (scaffolded by \`npm run new-kind\`, see docs/adding-a-kind.md).
 * TODO(${n.kind}): say which remote resource of the service it is, and fit the spec and
 * status below to it (the zod schemas are the source of truth of the CRD, its docs and
 * the controller's types).
 */
import { z } from "zod";
import { kindColumns, phaseColumn, serviceIdColumn, statusColumn } from "./columns.js";
import {
  type CrdDefinition,
  type CustomResource,
  described,
  type FieldRule,
  GROUP,
  VERSION,
  withRules,
} from "./definition.js";
import { INTEGER_LIMITS, managedSpecShape, serviceDescription, serviceName } from "./fields.js";
import { CONNECTION_REF_RULE, mutabilityRules } from "./mutability.js";
import { ownReason, ownReasons } from "./reasons.js";
import {
  externalIdStatus,
  kindStatus,
  optionalString,
  serviceCreatedTime,
} from "./status-fields.js";

/** The ${n.kind} spec fields that may not change freely (see mutability.ts). */
export const ${n.constant}_MUTABILITY: readonly FieldRule[] = [
  {
    field: "name",
    mutability: "immutable",
    owner: "service",
    why: "it names the ${n.words} in the service, fixed when it is created; create a new ${n.kind} for another name",
  },
  CONNECTION_REF_RULE,
];

/** Desired state of a ${n.kind}. */
export const ${n.kind}Spec = withRules(
  z
    .object({
      name: serviceName("${n.words}", { immutable: true }),
      description: serviceDescription("Description sent when the ${n.words} is created."),
      sizeGB: described(
        z.number().int().min(1).max(INTEGER_LIMITS.capacityGB),
        \`Size in GB, 1 to \${INTEGER_LIMITS.capacityGB}. A change grows the ${n.words}; a shrink is refused.\`,
      ),
      ...managedSpecShape,
    })
    .meta({
      description: "Desired ${n.words}. sizeGB, description, deletionPolicy and managementPolicies may change; name and connectionRef are fixed at creation.",
    }),
  ...mutabilityRules(${n.constant}_MUTABILITY),
);
/** Desired state of a ${n.kind}, with the CRD's defaults applied. */
export type ${n.kind}Spec = z.infer<typeof ${n.kind}Spec>;

/** Phase of a ${n.kind}, the PHASE column. */
export const ${n.kind}Phase = z.enum(["Pending", "Creating", "Ready", "Failed", "Unknown"]);
/** Phase of a ${n.kind}. */
export type ${n.kind}Phase = z.infer<typeof ${n.kind}Phase>;

/** Observed state of a ${n.kind}. */
export const ${n.kind}Status = kindStatus("the ${n.words}", {
  phase: described(
    ${n.kind}Phase,
    "Pending (not created yet), Creating, Ready, Failed, or Unknown (a remote status the operator does not know).",
  ).optional(),
  ${n.camel}Id: externalIdStatus("${n.words}"),
  remoteStatus: optionalString("The service's status of the ${n.words}, verbatim."),
  name: optionalString("Name of the ${n.words} in the service."),
  sizeGB: described(z.number(), "Size in GB.").optional(),
  createdTime: serviceCreatedTime("${n.words}"),
});
/** Observed state of a ${n.kind}. */
export type ${n.kind}Status = z.infer<typeof ${n.kind}Status>;

/** A whole ${n.kind} object. */
export type ${n.kind} = CustomResource<${n.kind}Spec, ${n.kind}Status>;

/**
 * The reasons only ${n.kind} writes (docs/conditions.md, kstatus and Argo CD read them).
 * TODO(${n.kind}): the kind's own refusals and waits; shared ones are in reasons.ts.
 */
export const ${n.constant}_REASONS = ownReasons({
  ${n.kind}ShrinkRefused: ownReason(
    "Terminal",
    ["Synced"],
    "sizeGB is below the ${n.words}'s size, and the service cannot shrink it; the ${n.words} keeps its size.",
    "Set sizeGB to the size or more.",
  ),
});

/** The ${n.kind} kind. */
export const ${n.camel}Crd: CrdDefinition<typeof ${n.kind}Spec, typeof ${n.kind}Status> = {
  group: GROUP,
  version: VERSION,
  kind: "${n.kind}",
  namespaced: true,
  plural: "${n.plural}",
  singular: "${n.lower}",
  shortNames: [],
  categories: ["aidc"],
  description:
    "A ${n.words} of the Compute and Storage Service, created from the spec and resized when sizeGB grows. TODO(${n.kind}): what kubectl explain shows.",
  spec: ${n.kind}Spec,
  status: ${n.kind}Status,
  remote: "managed",
  mutability: ${n.constant}_MUTABILITY,
  reasons: ${n.constant}_REASONS,
  // The shared rows of the kinds that join them which ${n.kind} writes (reasons.ts):
  // Available and Unavailable on Ready; add "Resolved" with a reference step.
  sharedReasons: ["Available", "Unavailable"],
  health: {
    field: "phase",
    states: { Failed: { health: "Degraded", message: "The ${n.words} failed" } },
  },
  printerColumns: kindColumns({
    shown: [
      phaseColumn("${n.words}"),
      statusColumn("Size", "number", "sizeGB", "Size in GB."),
    ],
    readyMeaning: "Whether the ${n.words} is usable",
    wide: [serviceIdColumn("ID", "${n.camel}Id", "${n.words}")],
  }),
};
`;
}
