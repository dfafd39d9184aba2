/**
 * The TrainingJob status stays bounded: a job of 64 pods with everything the status
 * shows at its largest (start command, 64 env names of 128 characters, 20 execution
 * records, 16 storages, 64 pods with a container, two volumes and five open ports)
 * fits in 96 KiB, and the task's own part (everything but pods and storages) in 16 KiB.
 */
import { describe, expect, it } from "vitest";
import { TrainingJobStatus } from "../../crds/trainingjob.js";
import type { NasInstance, TrainingTask } from "../../service/index.js";
import type { PodObservation } from "./remote.js";
import { remoteStatus } from "./remote.js";

/** The bound this test holds the status of a 64-pod job to. */
const STATUS_BOUND_BYTES = 96 * 1024;
/** The bound of the status without its pods and storages (the task's own record). */
const TASK_PART_BOUND_BYTES = 16 * 1024;

const env = Object.fromEntries(
  Array.from({ length: 100 }, (_, i) => [
    `VAR_${String(i).padStart(3, "0")}_${"X".repeat(120)}`,
    "secret-value",
  ]),
);

const task: TrainingTask = {
  id: "1234567890123456789",
  name: "n".repeat(64),
  createType: "TEMPLATE",
  templateId: "9876543210987654321",
  status: "RUNNING",
  aidcId: 12,
  priority: 2,
  image: `registry.example.internal/${"i".repeat(480)}`,
  imageType: "private",
  trainingType: "PRE_TRAINING",
  trainingFramework: "DeepSpeed",
  startCommand: "c".repeat(10_000),
  enableAutoRetry: true,
  maxRetryCount: 100,
  enableTimeoutCancel: true,
  timeoutHours: 8760,
  env,
  creatorName: "Some Creator Name",
  createdTime: "2026-01-01T00:00:00Z",
  startTime: "2026-01-01T00:01:00Z",
  lastUpdateTime: "2026-01-01T00:02:00Z",
  resource: {
    type: "worker",
    productCode: "train.gpu.a100.8x",
    productName: "8 x A100 80G",
    cpuCores: "96",
    memoryGB: "960",
    gpuName: "A100",
    gpuCount: "8",
    workerCount: 64,
    productPrice: "123.45",
  },
  execInfos: Array.from({ length: 40 }, (_, i) => ({
    status: "RUNNING",
    info: `record ${i}: ${"r".repeat(100)}`,
    createTime: `2026-01-01T00:${String(i).padStart(2, "0")}:00Z`,
  })),
};

const storages: NasInstance[] = Array.from({ length: 16 }, (_, i) => ({
  id: `nas-${String(i).padStart(12, "0")}`,
  name: `storage-${i}`,
  storageType: "NAS",
  status: "Running",
  mountPath: `/mnt/storage-${i}`,
  quota: "1024",
  used: "512",
})) as NasInstance[];

const port = (port: number, externalPort: number, protocol?: string) => ({
  port,
  ...(protocol ? { protocol } : {}),
  externalHost: "203.0.113.200",
  externalPort,
});

const pods: PodObservation[] = Array.from({ length: 64 }, (_, i) => ({
  podName: `task-1234567890123456789-worker-${i}`,
  resource: {
    containers: [
      { containerName: "main", status: "running", restartCount: 0, targetPort: [22, 8888, 8080] },
    ],
    volumes: [
      { nasName: "storage-0", nasType: "NAS", mountPath: "/mnt/data", readOnly: true, path: "/" },
      { nasName: "storage-1", nasType: "NAS", mountPath: "/mnt/out", readOnly: false, path: "/" },
    ],
  },
  ports: {
    ports: [port(22, 30000 + i), port(8888, 31000 + i, "http"), port(6006, 32000 + i, "http")],
    customPorts: [port(8080, 33000 + i, "http"), port(9090, 34000 + i, "https")],
  },
}));

describe("the TrainingJob status size", () => {
  it(`keeps a 64-pod job under ${STATUS_BOUND_BYTES / 1024} KiB and its task part under ${TASK_PART_BOUND_BYTES / 1024} KiB, env values left out`, () => {
    const status = remoteStatus({ task, storages, pods }, undefined);
    expect(() => TrainingJobStatus.parse(status)).not.toThrow();
    const whole = JSON.stringify(status);
    const { pods: _pods, storages: _storages, ...taskPart } = status;
    expect(whole.length).toBeLessThan(STATUS_BOUND_BYTES);
    expect(JSON.stringify(taskPart).length).toBeLessThan(TASK_PART_BOUND_BYTES);
    expect(whole).not.toContain("secret-value");
  });
});
