/**
 * The TrainingJob status stays bounded. A typical large job of 64 pods (start command,
 * 64 env names of 128 characters, 20 execution records, 16 storages, 64 pods with a
 * container, two volumes and five open ports) fits in 96 KiB, and the task's own part
 * (everything but pods and storages) in 16 KiB. From the largest answer of the service
 * (every string 100 000 characters, every list longer than kept) the status stays
 * under the bounds of test/support/status-size.ts: the pods' details share one budget
 * (pod-budget.ts) whatever the number of workers.
 */
import { describe, expect, it } from "vitest";
import {
  kibibytes,
  largestStoredConfig,
  long,
  longestString,
  measuredStatus,
  range,
  STATUS_BOUNDS_KIB,
} from "../../../test/support/status-size.js";
import { TrainingJobStatus, type TrainingPod } from "../../crds/trainingjob.js";
import { REMOTE_ADDRESS_CHARS } from "../../runtime/object-writes.js";
import type { NasInstance, TrainingTask } from "../../service/index.js";
import { podsWithinBudget } from "./pod-budget.js";
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
    // Within the pods' budget: every pod keeps its details.
    expect(status.pods?.every((p) => p.containers && p.volumes && p.ports)).toBe(true);
  });
});

/** A task whose every string and list is longer than the status keeps. */
const largestTask: TrainingTask = {
  ...largestStoredConfig,
  id: "1234567890123456789",
  createType: "TEMPLATE",
  templateId: "9876543210987654321",
  status: long("s"),
  aidcId: 12,
  creatorName: long("c"),
  createdTime: long("1"),
  startTime: long("2"),
  lastUpdateTime: long("3"),
  execInfos: range(100).map((i) => ({
    status: long("s"),
    info: long("r"),
    createTime: `${String(i).padStart(3, "0")}${long("t")}`,
  })),
};

const largestStorages = range(100).map(
  (i) =>
    ({
      id: `nas-${String(i).padStart(6, "0")}`,
      name: long("n"),
      storageType: long("t"),
      status: long("s"),
      mountPath: long("/"),
      quota: "1024",
      used: "512",
    }) as NasInstance,
);

const largestPort = (p: number) => ({
  port: p + 1,
  protocol: long("h"),
  externalHost: long("e"),
  externalPort: 30_000 + p,
});

/** `n` pods, each with more containers, volumes and ports than the status keeps. */
function largestPods(n: number): PodObservation[] {
  const containers = range(40).map(() => ({
    containerName: long("c"),
    status: long("s"),
    reason: long("r"),
    restartCount: 1,
    targetPort: range(100),
    podWebSSH: long("w"),
  }));
  const volumes = range(40).map(() => ({
    nasName: long("n"),
    nasType: long("t"),
    mountPath: long("/"),
    readOnly: true,
    path: long("/"),
  }));
  const ports = { ports: range(40).map(largestPort), customPorts: range(40).map(largestPort) };
  return range(n).map((i) => ({
    podName: `${i}-${long("p")}`,
    resource: { containers, volumes },
    ports,
  }));
}

describe("the TrainingJob status size from the largest answer of the service", () => {
  const cases = [
    { pods: 64, boundKiB: STATUS_BOUNDS_KIB.TrainingJob },
    { pods: 1024, boundKiB: STATUS_BOUNDS_KIB.TrainingJob1024Pods },
  ];
  for (const c of cases) {
    it(`keeps a ${c.pods}-pod job under ${c.boundKiB} KiB, every pod named, env values left out`, () => {
      const status = remoteStatus(
        { task: largestTask, storages: largestStorages, pods: largestPods(c.pods) },
        undefined,
      );
      const { whole, bytes } = measuredStatus("TrainingJob", TrainingJobStatus, {
        ...status,
        phase: "Running",
      });
      expect(bytes).toBeLessThan(kibibytes(c.boundKiB));
      expect(longestString(whole)).toBeLessThanOrEqual(REMOTE_ADDRESS_CHARS);
      expect(JSON.stringify(whole)).not.toContain("secret-value");
      expect(status.pods).toHaveLength(c.pods);
      expect(status.execInfos).toHaveLength(20);
      expect(status.config?.envKeys).toHaveLength(64);
    });
  }
});

describe("podsWithinBudget", () => {
  const pod = (name: string, extra = 0): TrainingPod => ({
    name,
    containers: [{ name: "main", reason: "r".repeat(extra) }],
    ports: [{ port: 22, custom: false, externalHost: "203.0.113.1", externalPort: 30022 }],
  });
  const size = (p: TrainingPod) => JSON.stringify(p).length;
  const portsOnly = (p: TrainingPod): TrainingPod => ({ name: p.name, ports: p.ports ?? [] });

  const cases: { reason: string; pods: TrainingPod[]; budget: number; want: TrainingPod[] }[] = [
    {
      reason: "keeps every pod whole when they fit",
      pods: [pod("a"), pod("b")],
      budget: size(pod("a")) * 2,
      want: [pod("a"), pod("b")],
    },
    {
      reason: "keeps the name and ports of a pod whose details do not fit",
      pods: [pod("a"), pod("b", 100)],
      budget: size(pod("a")) + size(portsOnly(pod("b"))),
      want: [pod("a"), portsOnly(pod("b"))],
    },
    {
      reason: "keeps the name alone when not even the ports fit",
      pods: [pod("a"), pod("b")],
      budget: size(pod("a")),
      want: [pod("a"), { name: "b" }],
    },
    {
      reason: "keeps later pods whole when they fit after a reduced one",
      pods: [pod("a", 1000), pod("b")],
      budget: size(pod("b")) + size(portsOnly(pod("a"))),
      want: [portsOnly(pod("a")), pod("b")],
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      expect(podsWithinBudget(c.pods, c.budget)).toEqual(c.want);
    });
  }
});
