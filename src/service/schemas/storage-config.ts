/**
 * The storage configuration item of task and template requests, and the task resource
 * object shared by task detail and templates.
 */
import { z } from "zod";
import { optionalInt, optionalString, SERVICE_ID_PATTERN, SERVICE_ID_RULE } from "./primitives.js";

/**
 * A storage mount on the wire. `storageId` is required here although the spec's table
 * has no required column: a mount without a storage cannot mean anything.
 */
export const storageConfigItemSchema = z.object({
  storageId: z.string().regex(SERVICE_ID_PATTERN, `expected a service id (${SERVICE_ID_RULE})`),
  storageType: z.string().optional(),
  fileDirectory: z.string().optional(),
  mountPath: z.string().optional(),
  /** true read-only (the default on task creation), false read-write. */
  onlyRead: z.boolean().optional(),
});

/** A storage mount in a task or template request. */
export type StorageConfigItem = z.infer<typeof storageConfigItemSchema>;

/**
 * A task's or template's resource object as returned: per-node figures as text,
 * `workerCount` an integer, `type` one of worker, ps, Chief or lancher (as spelled).
 */
export const taskResourceSchema = z.object({
  type: optionalString,
  gpuName: optionalString,
  cpuCores: optionalString,
  gpuCount: optionalString,
  memoryGB: optionalString,
  productCode: optionalString,
  productName: optionalString,
  workerCount: optionalInt,
  productPrice: optionalString,
});

/** A task's or template's resource object. */
export type TaskResource = z.infer<typeof taskResourceSchema>;
