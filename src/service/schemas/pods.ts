/**
 * Pods of a training task as the service answers them: the pod list (an operation the
 * spec refers to without a shape), a pod's containers and volumes, its open ports and
 * the answer of an open-port (the port operations' bodies are declared beside the
 * operations, in kinds/trainingjob.pods.ts).
 */
import { z } from "zod";
import {
  idString,
  optionalBoolean,
  optionalInt,
  optionalString,
  optionalTimestamp,
} from "./primitives.js";

function listOf<T extends z.ZodType>(item: T) {
  return z.preprocess((v) => (v === null || v === undefined ? [] : v), z.array(item));
}

/**
 * A pod of a task, as the assumed pod list returns it. `podName` is also read from
 * `name`; the other fields are optional because the shape is not shown.
 */
export const trainingPodSchema = z.preprocess(
  (v) => {
    if (v !== null && typeof v === "object" && !Array.isArray(v)) {
      const o = v as Record<string, unknown>;
      return o.podName === undefined ? { ...o, podName: o.name } : o;
    }
    return typeof v === "string" ? { podName: v } : v;
  },
  z.object({
    podName: idString,
    status: optionalString,
    role: optionalString,
    ip: optionalString,
    nodeName: optionalString,
    createTime: optionalTimestamp,
  }),
);

/** A pod of a task. */
export type TrainingPod = z.infer<typeof trainingPodSchema>;

/** A container of a pod. */
export const podContainerSchema = z.object({
  containerName: optionalString,
  /** For example `running`. */
  status: optionalString,
  /** Why the state is abnormal; normally empty. */
  reason: optionalString,
  restartCount: optionalInt,
  /** Opened ports. */
  targetPort: listOf(z.preprocess((v) => (typeof v === "string" ? Number(v) : v), z.int())),
  /** Terminal address; empty when no terminal is open. */
  podWebSSH: optionalString,
});

/** A volume mounted in a pod. */
export const podVolumeSchema = z.object({
  nasName: optionalString,
  nasType: optionalString,
  mountPath: optionalString,
  readOnly: optionalBoolean,
  /** Source path on the storage side. */
  path: optionalString,
});

/** The resource detail of one pod. */
export const podResourceSchema = z.object({
  containers: listOf(podContainerSchema),
  volumes: listOf(podVolumeSchema),
});

/** The resource detail of one pod. */
export type PodResource = z.infer<typeof podResourceSchema>;

/** An open port of a pod; `externalHost:externalPort` is its external address. */
export const openPortSchema = z.object({
  /** http or https; system ports normally have none. */
  protocol: optionalString,
  port: z.preprocess((v) => (typeof v === "string" ? Number(v) : v), z.int()),
  externalHost: optionalString,
  externalPort: optionalInt,
});

/** An open port of a pod. */
export type OpenPort = z.infer<typeof openPortSchema>;

/** The open ports of a pod: system ports (opened automatically) and custom ports. */
export const podOpenPortsSchema = z.object({
  ports: listOf(openPortSchema),
  customPorts: listOf(openPortSchema),
});

/** The open ports of a pod. */
export type PodOpenPorts = z.infer<typeof podOpenPortsSchema>;

/**
 * Answer of the assumed open-port operation: the opened port when the service says,
 * undefined when it answers an empty object (then read the port list).
 */
export const openPodPortResultSchema = z.preprocess((v) => {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return undefined;
  return (v as Record<string, unknown>).port === undefined ? undefined : v;
}, openPortSchema.optional());
