import { z } from "zod";
import { kindColumns, serviceIdColumn, statusColumn } from "./columns.js";
import {
  type CelRule,
  type CrdDefinition,
  type CustomResource,
  described,
  type FieldRule,
  GROUP,
  VERSION,
  withRules,
} from "./definition.js";
import {
  exportTo,
  localObjectReference,
  managedSpecShape,
  serviceDescription,
  serviceName,
} from "./fields.js";
import { CONNECTION_REF_RULE, mutabilityRules, sameRuleFor } from "./mutability.js";
import { priority, trainingConfigRules, trainingConfigShape } from "./training.js";
import { TRAINING_JOB_REASONS } from "./trainingjob-reasons.js";
import { TrainingJobStatus } from "./trainingjob-status.js";

export * from "./trainingjob-reasons.js";
export * from "./trainingjob-status.js";

/** How the task is created: from the spec, as a copy of another job, or from a template. */
export const CreateType = z.enum(["DIRECT", "COPY", "TEMPLATE"]);
/** `DIRECT`, `COPY` or `TEMPLATE`. */
export type CreateType = z.infer<typeof CreateType>;

/** One custom port to open on every pod of the task. */
export const trainingJobPortSchema = z
  .object({
    port: described(z.number().int().min(1).max(65535), "Port inside the container, 1 to 65535."),
    protocol: described(
      z.enum(["http", "https"]),
      "Protocol of the port: http (default) or https.",
    ).default("http"),
  })
  .meta({ description: "A custom port to open on every pod." });
/** One custom port of a TrainingJob. */
export type TrainingJobPort = z.infer<typeof trainingJobPortSchema>;

const shape = {
  taskName: serviceName("task", { immutable: false }),
  description: serviceDescription(
    "Description of the task; the only task field the service can update, so it may change at any time.",
  ),
  createType: described(
    CreateType,
    "How the task is created: DIRECT (default) from this spec, COPY of the TrainingJob in copyFrom, or TEMPLATE from the TrainingTemplate in templateRef.",
  ).default("DIRECT"),
  templateRef: localObjectReference(
    "TrainingTemplate",
    "The TrainingTemplate (same namespace) the task is created from; required exactly when createType is TEMPLATE.",
  ).optional(),
  copyFrom: localObjectReference(
    "TrainingJob",
    "The TrainingJob (same namespace) whose task is copied; required exactly when createType is COPY.",
  ).optional(),
  // No CRD default: a default would be stored in every spec, so a TEMPLATE or COPY job
  // could never take the priority of its template or source (the operator applies 3).
  priority: priority(
    "Scheduling priority 1 to 3; a smaller number is a higher priority. When omitted: the template's priority (createType TEMPLATE), the source job's (COPY), else 3, the service's default; status.priority shows the priority the task runs at.",
  ).optional(),
  ...trainingConfigShape,
  bucketEnv: withRules(
    z
      .array(
        z
          .object({
            bucketRef: localObjectReference("Bucket", "The Bucket (same namespace)."),
            prefix: described(
              z
                .string()
                .min(1)
                .max(32)
                .regex(/^[A-Z_][A-Z0-9_]*$/),
              "Prefix of the variables: <prefix>_NAME, <prefix>_ENDPOINT, <prefix>_REGION (upper-case letters, digits, _). Default BUCKET.",
            ).default("BUCKET"),
          })
          .meta({ description: "Environment variables that point the task at a Bucket." }),
      )
      .max(8)
      .meta({
        description:
          "Buckets whose name, endpoint URL and region the task gets as environment variables (<prefix>_NAME, <prefix>_ENDPOINT, <prefix>_REGION; they win over env of the same name). The job waits until each Bucket is Ready. At most 8. No S3 keys are passed: the workload brings its own. Immutable.",
        "x-kubernetes-list-type": "atomic",
      }),
    {
      rule: "self.all(x, self.exists_one(y, y.prefix == x.prefix))",
      message: "spec.bucketEnv: each entry needs its own prefix",
    },
  ).optional(),
  ports: z
    .array(trainingJobPortSchema)
    .max(32)
    .optional()
    .meta({
      description:
        "Custom ports to open on every pod (at most 32, each port once). May change at any time; the external addresses appear in status.pods[].ports.",
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["port"],
    }),
  exposePorts: described(
    z.boolean(),
    "When true, the operator creates a Service and EndpointSlice per open custom port that point at its external address, so that in-cluster clients reach it by name. Default false; may change at any time.",
  ).default(false),
  exportTo: exportTo(
    "TASK_ID, and for each pod (by name order, from 0) POD_<i>_NAME and, per open port with an external address, POD_<i>_PORT_<port> (host:port)",
  ).optional(),
  ...managedSpecShape,
};

const refRules = (field: "templateRef" | "copyFrom", createType: CreateType): CelRule[] => [
  {
    rule: `self.createType != '${createType}' || has(self.${field})`,
    message: `${field} is required when createType is ${createType}`,
    fieldPath: `.${field}`,
    reason: "FieldValueRequired",
  },
  {
    rule: `self.createType == '${createType}' || !has(self.${field})`,
    messageExpression: `'${field} is allowed only when createType is ${createType}, not ' + self.createType`,
    fieldPath: `.${field}`,
    reason: "FieldValueForbidden",
  },
];

const directRules: CelRule[] = (["image", "productCode", "workerCount"] as const).map((f) => ({
  rule: `self.createType != 'DIRECT' || has(self.${f})`,
  message: `${f} is required when createType is DIRECT`,
  fieldPath: `.${f}`,
  reason: "FieldValueRequired",
}));

/**
 * The TrainingJob spec fields fixed at submission, the service's rule (see
 * mutability.ts).
 */
export const TRAINING_JOB_MUTABILITY: readonly FieldRule[] = [
  ...sameRuleFor(
    [
      "taskName",
      "createType",
      "templateRef",
      "copyFrom",
      "priority",
      ...Object.keys(trainingConfigShape),
      "bucketEnv",
    ],
    {
      mutability: "immutable",
      owner: "service",
      why: "the service cannot change a submitted training task (only its description and ports); create a new TrainingJob instead",
    },
  ),
  CONNECTION_REF_RULE,
];

/** Desired state of a TrainingJob: one distributed training task of the service. */
export const TrainingJobSpec = withRules(
  z.object(shape).meta({
    description:
      "Desired training task. Only description, ports, exposePorts, exportTo, deletionPolicy and managementPolicies may change after creation.",
  }),
  ...trainingConfigRules,
  ...refRules("templateRef", "TEMPLATE"),
  ...refRules("copyFrom", "COPY"),
  ...directRules,
  ...mutabilityRules(TRAINING_JOB_MUTABILITY),
);
/** Desired state of a TrainingJob, with the CRD's defaults applied. */
export type TrainingJobSpec = z.infer<typeof TrainingJobSpec>;

/** A whole TrainingJob object. */
export type TrainingJob = CustomResource<TrainingJobSpec, TrainingJobStatus>;

/** The TrainingJob kind (`tj`). */
export const trainingJobCrd: CrdDefinition<typeof TrainingJobSpec, typeof TrainingJobStatus> = {
  group: GROUP,
  version: VERSION,
  kind: "TrainingJob",
  health: {
    // A finished task is Healthy and a failed one Degraded whatever its conditions, as
    // Argo CD shows a Job; a stopped task is Suspended.
    field: "phase",
    states: {
      Succeeded: { health: "Healthy", message: "The training task finished" },
      Failed: { health: "Degraded", message: "The training task failed" },
      Stopped: { health: "Suspended", message: "The training task was stopped" },
    },
  },
  remote: "managed",
  mutability: TRAINING_JOB_MUTABILITY,
  reasons: TRAINING_JOB_REASONS,
  sharedReasons: ["Resolved", "SourceJobNotReady", "NasVolumeNotReady"],
  namespaced: true,
  plural: "trainingjobs",
  singular: "trainingjob",
  shortNames: ["tj"],
  categories: ["aidc"],
  description:
    "A distributed training task of the Compute and Storage Service. The operator submits it once, tracks the asynchronous subscription, and mirrors the task's state, storages, pods and open ports into status.",
  spec: TrainingJobSpec,
  status: TrainingJobStatus,
  printerColumns: kindColumns({
    shown: [
      statusColumn("Status", "string", "phase", "Phase of the task."),
      serviceIdColumn("Task-ID", "taskId", "task"),
    ],
    readyMeaning: "Whether the task is running or finished successfully",
    wide: [
      statusColumn(
        "Remote-Status",
        "string",
        "remoteStatus",
        "The service's task status, verbatim.",
      ),
      statusColumn(
        "Image",
        "string",
        "config.image",
        "Container image of the workers, as the service stores it (a COPY or TEMPLATE job's inherited one too).",
      ),
      statusColumn("Workers", "integer", "config.workerCount", "Number of nodes of the task."),
    ],
  }),
};
