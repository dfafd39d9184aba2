import { z } from "zod";
import { kindColumns, serviceIdColumn } from "./columns.js";
import { timestamp } from "./conditions.js";
import {
  type CrdDefinition,
  type CustomResource,
  type FieldRule,
  GROUP,
  VERSION,
  withRules,
} from "./definition.js";
import {
  computeCenterId,
  localObjectReference,
  managedSpecShape,
  serviceDescription,
  serviceName,
} from "./fields.js";
import { CONNECTION_REF_RULE, mutabilityRules } from "./mutability.js";
import { ownReason, ownReasons } from "./reasons/own.js";
import {
  externalIdStatus,
  kindStatus,
  managedStatusShape,
  optionalString,
} from "./status-fields.js";
import { priority, trainingConfigRules, trainingConfigShape } from "./training.js";
import { taskConfigSchema } from "./trainingjob-status.js";

const shape = {
  name: serviceName("template", { immutable: false }),
  description: serviceDescription("Description of the template."),
  fromTrainingJobRef: localObjectReference(
    "TrainingJob",
    "Save the configuration of this TrainingJob's task (same namespace) as the template, instead of the fields below; then only name, description and deletionPolicy may be set. Immutable.",
  ).optional(),
  aidcId: computeCenterId("Compute center the template is bound to", "."),
  priority: priority(
    "Scheduling priority 1 to 3 of tasks created from the template; a smaller number is a higher priority. A TrainingJob from the template that omits priority runs at this one (3 when both omit it).",
  ).optional(),
  ...trainingConfigShape,
  ...managedSpecShape,
};

/** Template fields that come from the TrainingJob when fromTrainingJobRef is set. */
const CONFIG_FIELDS = [
  "aidcId",
  "priority",
  ...(Object.keys(trainingConfigShape) as (keyof typeof trainingConfigShape)[]),
];

/** The TrainingTemplate spec fields that may not change freely (see mutability.ts). */
export const TRAINING_TEMPLATE_MUTABILITY: readonly FieldRule[] = [
  {
    field: "fromTrainingJobRef",
    mutability: "immutable",
    owner: "operator",
    why: "a template is saved from its TrainingJob once; create another TrainingTemplate to save another job",
  },
  CONNECTION_REF_RULE,
];

/** The condition reasons only TrainingTemplate writes (reasons.ts has the shared ones). */
export const TRAINING_TEMPLATE_REASONS = ownReasons({
  NameTakenRefused: ownReason(
    "Terminal",
    ["Ready", "Synced"],
    "Another template of the service has this name (checked again every poll).",
    "Choose another spec.name, or delete the other template.",
  ),
});

/** Desired state of a TrainingTemplate: a saved training configuration of the service. */
export const TrainingTemplateSpec = withRules(
  z.object(shape).meta({
    description:
      "Desired training template: either the configuration fields (sent in full on every change) or fromTrainingJobRef.",
  }),
  ...trainingConfigRules,
  ...CONFIG_FIELDS.map((f) => ({
    rule: `!has(self.fromTrainingJobRef) || !has(self.${f})`,
    message: `${f} is not allowed with fromTrainingJobRef: the configuration comes from the TrainingJob`,
    fieldPath: `.${f}`,
    reason: "FieldValueForbidden" as const,
  })),
  ...(["image", "productCode"] as const).map((f) => ({
    rule: `has(self.fromTrainingJobRef) || has(self.${f})`,
    message: `${f} is required unless fromTrainingJobRef is set`,
    fieldPath: `.${f}`,
    reason: "FieldValueRequired" as const,
  })),
  ...mutabilityRules(TRAINING_TEMPLATE_MUTABILITY),
);
/** Desired state of a TrainingTemplate, with the CRD's defaults applied. */
export type TrainingTemplateSpec = z.infer<typeof TrainingTemplateSpec>;

/** Observed state of a TrainingTemplate. */
export const TrainingTemplateStatus = kindStatus("the template", {
  ...managedStatusShape,
  templateId: externalIdStatus("template"),
  templateName: optionalString("Name of the template in the service."),
  sourceTaskId: optionalString("Id of the task the template was saved from (fromTrainingJobRef)."),
  config: taskConfigSchema.optional().meta({
    description:
      "The template's configuration as the service stores it (what a TEMPLATE job inherits). Env values are never shown, only their names.",
  }),
  lastAppliedTime: timestamp(
    "When the operator last created or fully updated the template.",
  ).optional(),
});
/** Observed state of a TrainingTemplate. */
export type TrainingTemplateStatus = z.infer<typeof TrainingTemplateStatus>;

/** A whole TrainingTemplate object. */
export type TrainingTemplate = CustomResource<TrainingTemplateSpec, TrainingTemplateStatus>;

/** The TrainingTemplate kind (`ttpl`). */
export const trainingTemplateCrd: CrdDefinition<
  typeof TrainingTemplateSpec,
  typeof TrainingTemplateStatus
> = {
  group: GROUP,
  version: VERSION,
  kind: "TrainingTemplate",
  remote: "managed",
  mutability: TRAINING_TEMPLATE_MUTABILITY,
  reasons: TRAINING_TEMPLATE_REASONS,
  sharedReasons: ["Available", "Resolved", "SourceJobNotReady", "NasVolumeNotReady"],
  namespaced: true,
  plural: "trainingtemplates",
  singular: "trainingtemplate",
  shortNames: ["ttpl"],
  categories: ["aidc"],
  description:
    "A training task template of the Compute and Storage Service: created from the spec and fully updated on every change, or saved from a TrainingJob. TrainingJobs with createType TEMPLATE refer to it.",
  spec: TrainingTemplateSpec,
  status: TrainingTemplateStatus,
  printerColumns: kindColumns({
    shown: [serviceIdColumn("Template-ID", "templateId", "template")],
    readyMeaning: "Whether the template exists and matches the spec",
  }),
};
