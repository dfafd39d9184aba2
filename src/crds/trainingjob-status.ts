import { z } from "zod";
import { timestamp } from "./conditions.js";
import { described } from "./definition.js";
import {
  exportStatusShape,
  externalIdStatus,
  kindStatus,
  managedStatusShape,
  optionalFlag,
  optionalString,
  serviceCreatedTime,
  subscriptionStatusShape,
} from "./status-fields.js";

/**
 * Observed state of a TrainingJob, written only by the operator through the status
 * subresource. Timestamps are RFC 3339 (the client normalises the service's formats);
 * values the service gives as strings stay strings.
 */

/** How many characters of the start command the status keeps. */
export const MAX_START_COMMAND_CHARS = 1024;
/** How many env names the status keeps (the spec allows 64). */
export const MAX_ENV_KEYS = 64;

/** Phase of a TrainingJob, the STATUS column. */
export const TrainingJobPhase = z.enum([
  "Pending",
  "Creating",
  "Starting",
  "Running",
  "Succeeded",
  "Failed",
  "Stopped",
  "Unknown",
]);
/** Phase of a TrainingJob. */
export type TrainingJobPhase = z.infer<typeof TrainingJobPhase>;

/** Resources of each node of the task, as the service reports them. */
export const trainingResourceSchema = z
  .object({
    type: optionalString("Node role: worker, ps, Chief or lancher (the service's spelling)."),
    productCode: optionalString("Resource specification of the nodes."),
    productName: optionalString("Name of the resource specification."),
    cpuCores: optionalString("CPU cores per node."),
    memoryGB: optionalString("Memory per node in GB."),
    gpuName: optionalString("GPU model; empty without GPU."),
    gpuCount: optionalString("GPUs per node."),
    workerCount: described(z.number().int(), "Number of nodes.").optional(),
    productPrice: optionalString("Price of the specification, without unit."),
  })
  .meta({ description: "Resources of each node, as the service reports them." });
/** Resources of a task's nodes. */
export type TrainingResource = z.infer<typeof trainingResourceSchema>;

/** One execution record of the task. */
export const execInfoSchema = z
  .object({
    status: optionalString("Task status the record is about."),
    info: optionalString("Text of the record."),
    createTime: timestamp("When the record was written.").optional(),
  })
  .meta({ description: "One execution record of the task." });
/** One execution record. */
export type ExecInfo = z.infer<typeof execInfoSchema>;

/** One storage mounted by the task. */
export const mountedStorageSchema = z
  .object({
    storageId: optionalString("Id of the storage instance."),
    name: optionalString("Directory name of the storage."),
    storageType: optionalString("Storage type."),
    status: optionalString("Status of the storage instance, verbatim (e.g. Running)."),
    mountPath: optionalString("Default mount path of the storage."),
    quotaGB: described(z.number(), "Capacity in GB.").optional(),
    usedGB: described(z.number(), "Used amount in GB.").optional(),
  })
  .meta({ description: "One storage mounted by the task." });
/** One storage mounted by the task. */
export type MountedStorage = z.infer<typeof mountedStorageSchema>;

/** One container of a pod. */
export const podContainerSchema = z
  .object({
    name: optionalString("Container name."),
    status: optionalString("Container status, verbatim (e.g. running)."),
    reason: optionalString("Reason of an abnormal state; empty normally."),
    restartCount: described(z.number().int(), "Restarts of the container.").optional(),
    targetPorts: described(z.array(z.number().int()), "Ports opened on the container.").optional(),
    webSSH: optionalString("Terminal address; empty when no terminal is open."),
  })
  .meta({ description: "One container of the pod." });

/** One volume mounted in a pod. */
export const podVolumeSchema = z
  .object({
    name: optionalString("Volume name."),
    type: optionalString("Volume type."),
    mountPath: optionalString("Path in the container."),
    readOnly: described(z.boolean(), "True when mounted read-only.").optional(),
    path: optionalString("Source path on the storage side."),
  })
  .meta({ description: "One volume mounted in the pod." });

/** One open port of a pod with its external address. */
export const podPortSchema = z
  .object({
    port: described(z.number().int(), "Port inside the container."),
    protocol: optionalString("http or https; empty for most system ports."),
    custom: described(
      z.boolean(),
      "True for a custom port (spec.ports), false for a system port the service opened.",
    ),
    externalHost: optionalString("External access IP or host."),
    externalPort: described(z.number().int(), "External port on externalHost.").optional(),
    serviceName: optionalString(
      "Name of the Service the operator created for this port (spec.exposePorts true, custom ports only).",
    ),
  })
  .meta({ description: "One open port of the pod; externalHost:externalPort is its address." });
/** One open port of a pod. */
export type PodPort = z.infer<typeof podPortSchema>;

/** One pod of the task. */
export const trainingPodSchema = z
  .object({
    name: described(z.string(), "Pod name in the service."),
    containers: z
      .array(podContainerSchema)
      .optional()
      .meta({ description: "Containers of the pod." }),
    volumes: z
      .array(podVolumeSchema)
      .optional()
      .meta({ description: "Volumes mounted in the pod." }),
    ports: z.array(podPortSchema).optional().meta({
      description: "Open ports of the pod (system and custom) with their external addresses.",
    }),
  })
  .meta({ description: "One pod of the task." });
/** One pod of the task. */
export type TrainingPod = z.infer<typeof trainingPodSchema>;

/** Where the task's configuration came from. */
export const taskSourceSchema = z
  .object({
    type: optionalString("How the task was created: DIRECT, COPY or TEMPLATE."),
    id: optionalString(
      "Id of the template (TEMPLATE) or of the copied task (COPY) in the service, when the service reports it.",
    ),
  })
  .meta({ description: "How the task was created and from what." });

/**
 * The task's configuration as the service stores it: for a COPY or TEMPLATE job the
 * values it inherited. Env values are never copied (they may be secrets), only the
 * names.
 */
export const taskConfigSchema = z
  .object({
    name: optionalString("Name of the task in the service."),
    source: taskSourceSchema.optional(),
    image: optionalString("Container image of the workers."),
    imageType: optionalString("Kind of image: general, application or private."),
    trainingType: optionalString("Kind of training: PRE_TRAINING or HPC."),
    trainingFramework: optionalString("Training framework: PyTorch, DeepSpeed, MPI or TensorFlow."),
    productCode: optionalString("Resource specification of each node."),
    workerCount: described(z.number().int(), "Number of nodes.").optional(),
    priority: described(z.number().int(), "Scheduling priority 1 to 3.").optional(),
    startCommand: optionalString(
      `Training entry command run in each worker (cut at ${MAX_START_COMMAND_CHARS} characters, ending in …).`,
    ),
    enableAutoRetry: optionalFlag("The task is retried automatically on failure."),
    maxRetryCount: described(z.number().int(), "Maximum number of automatic retries.").optional(),
    enableTimeoutCancel: optionalFlag("The task is cancelled after timeoutHours."),
    timeoutHours: described(z.number().int(), "Maximum run time in hours.").optional(),
    envKeys: z
      .array(z.string())
      .max(MAX_ENV_KEYS)
      .optional()
      .meta({
        description: `Names of the task's environment variables, sorted (at most ${MAX_ENV_KEYS}); their values are never copied into status.`,
      }),
  })
  .meta({
    description:
      "The task's configuration as the service stores it (for a COPY or TEMPLATE job, what it inherited). Env values are never shown, only their names.",
  });
/** The task's configuration in status. */
export type TaskConfig = z.infer<typeof taskConfigSchema>;

/** Observed state of a TrainingJob. */
export const TrainingJobStatus = kindStatus("the task", {
  ...managedStatusShape,
  phase: described(
    TrainingJobPhase,
    "Pending (not submitted yet), Creating (the service has the order), Starting, Running, Succeeded, Failed, Stopped, or Unknown (a remote status the operator does not know).",
  ).optional(),
  taskId: externalIdStatus("task"),
  ...subscriptionStatusShape("create subscription"),
  remoteStatus: optionalString("The service's task status, verbatim (e.g. RUNNING)."),
  aidcId: described(z.number().int(), "Compute center that runs the task.").optional(),
  priority: described(
    z.number().int(),
    "Scheduling priority the task runs at, as the service reports it (spec.priority, else the template's or source job's, else 3).",
  ).optional(),
  creator: optionalString(
    "Who created the task in the service (its creator name, else its user id).",
  ),
  createdTime: serviceCreatedTime("task"),
  startTime: timestamp("When the task started.").optional(),
  lastUpdateTime: timestamp("When the service last changed the task.").optional(),
  config: taskConfigSchema.optional(),
  resource: trainingResourceSchema.optional(),
  execInfos: z.array(execInfoSchema).max(20).optional().meta({
    description: "The most recent execution records (at most 20), oldest first.",
  }),
  storages: z.array(mountedStorageSchema).optional().meta({
    description:
      "Storages the task mounts. Absent until they are first read, a few seconds after the task's first look (PodsObserved=False PodsNotYetRead meanwhile).",
  }),
  pods: z.array(trainingPodSchema).optional().meta({
    description:
      "Pods of the task with their containers, volumes and open ports. Absent until they are first read, a few seconds after the task's first look (PodsObserved=False PodsNotYetRead meanwhile); empty while the task has none.",
  }),
  ...exportStatusShape,
});
/** Observed state of a TrainingJob. */
export type TrainingJobStatus = z.infer<typeof TrainingJobStatus>;
