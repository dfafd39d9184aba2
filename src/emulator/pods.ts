/**
 * Pods of an emulated task: one per worker, each with one container, the task's
 * storages as volumes, an SSH system port and the custom ports the user opened.
 */
import type { PodRecord, TaskRecord } from "./records.js";

/** External host of every port mapping. */
export const EXTERNAL_HOST = "203.0.113.10";

/** The container port opened on every pod automatically (SSH). */
export const SYSTEM_PORT = 22;

/**
 * What placing pods takes from the emulator's state (EmulatorState provides it): its
 * random source, its clock and the allocator of external ports.
 */
export interface PodPlacement {
  random(): number;
  now(): number;
  allocateExternalPort(): number;
}

/** Pods for a task that has just started. */
export function createPods(task: TaskRecord, state: PodPlacement): PodRecord[] {
  const pods: PodRecord[] = [];
  for (let i = 0; i < task.workerCount; i++) {
    const podName = `${task.id}-worker-${i}`;
    pods.push({
      podName,
      role: "worker",
      ip: `10.${(i >> 8) & 255}.${i & 255}.${Math.floor(state.random() * 250) + 2}`,
      nodeName: `node-${String(Math.floor(state.random() * 64)).padStart(2, "0")}`,
      createdAt: state.now(),
      containers: [
        {
          containerName: "trainer",
          status: "running",
          reason: "",
          restartCount: 0,
          podWebSSH: "",
        },
      ],
      systemPorts: [
        {
          port: SYSTEM_PORT,
          externalHost: EXTERNAL_HOST,
          externalPort: state.allocateExternalPort(),
        },
      ],
      customPorts: [],
    });
  }
  return pods;
}

/** Container status shown for a task status: running, waiting or terminated. */
export function containerStatusFor(taskStatus: string): string {
  if (taskStatus === "RUNNING") return "running";
  if (taskStatus === "PENDING") return "waiting";
  return "terminated";
}
