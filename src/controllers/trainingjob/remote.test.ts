import { describe, expect, it } from "vitest";
import { MAX_ENV_KEYS, MAX_START_COMMAND_CHARS } from "../../crds/trainingjob.js";
import type { TrainingTask } from "../../service/index.js";
import {
  configStatus,
  MAX_EXEC_INFOS,
  podPortsStatus,
  remoteDescription,
  remoteStatus,
} from "./remote.js";

const task: TrainingTask = {
  id: "task-1",
  status: "RUNNING",
  aidcId: 1,
  priority: 1,
  desc: "d",
  creatorName: "Alice",
  createdBy: "user-1",
  createdTime: "2025-01-01T00:00:00Z",
  startTime: "2025-01-01T00:01:00Z",
  lastUpdateTime: "2025-01-01T00:02:00Z",
  resource: { type: "worker", productCode: "train.cpu.16", workerCount: 2, gpuName: "" },
  execInfos: [
    { status: "RUNNING", info: "started", createTime: "2025-01-01T00:01:00Z" },
    { status: "PENDING", info: "accepted", createTime: "2025-01-01T00:00:00Z" },
  ],
};

describe("remoteStatus", () => {
  it("maps the detail: status, priority, times, resource, creator, records oldest first", () => {
    expect(remoteStatus({ task }, undefined)).toEqual({
      remoteStatus: "RUNNING",
      aidcId: 1,
      priority: 1,
      createdTime: "2025-01-01T00:00:00Z",
      startTime: "2025-01-01T00:01:00Z",
      lastUpdateTime: "2025-01-01T00:02:00Z",
      creator: "Alice",
      config: { priority: 1, productCode: "train.cpu.16", workerCount: 2 },
      resource: { type: "worker", productCode: "train.cpu.16", workerCount: 2 },
      execInfos: [
        { status: "PENDING", info: "accepted", createTime: "2025-01-01T00:00:00Z" },
        { status: "RUNNING", info: "started", createTime: "2025-01-01T00:01:00Z" },
      ],
    });
  });

  it("keeps only the newest execution records", () => {
    const many = Array.from({ length: 30 }, (_, i) => ({
      info: `r${i}`,
      createTime: `2025-01-01T00:${String(i).padStart(2, "0")}:00Z`,
    }));
    const s = remoteStatus({ task: { ...task, execInfos: many } }, undefined);
    expect(s.execInfos).toHaveLength(MAX_EXEC_INFOS);
    expect(s.execInfos?.at(-1)?.info).toBe("r29");
  });

  it("maps storages with numbers for quota and usage", () => {
    const s = remoteStatus(
      {
        task,
        storages: [{ id: "nas-1", name: "data", quota: "100", used: "x", status: "Running" }],
      },
      undefined,
    );
    expect(s.storages).toEqual([
      { storageId: "nas-1", name: "data", quotaGB: 100, status: "Running" },
    ]);
  });

  it("maps pods with containers, volumes and ports", () => {
    const s = remoteStatus(
      {
        task,
        pods: [
          {
            podName: "p0",
            resource: {
              containers: [
                {
                  containerName: "c",
                  status: "running",
                  restartCount: 0,
                  targetPort: [22],
                  reason: "",
                },
              ],
              volumes: [{ nasName: "data", mountPath: "/data", readOnly: true, path: "/" }],
            },
            ports: {
              ports: [{ port: 22, externalHost: "h", externalPort: 30001 }],
              customPorts: [
                { port: 8888, protocol: "http", externalHost: "h", externalPort: 30002 },
              ],
            },
          },
        ],
      },
      undefined,
    );
    expect(s.pods).toEqual([
      {
        name: "p0",
        containers: [{ name: "c", status: "running", restartCount: 0, targetPorts: [22] }],
        volumes: [{ name: "data", mountPath: "/data", readOnly: true, path: "/" }],
        ports: [
          { port: 22, custom: false, externalHost: "h", externalPort: 30001 },
          { port: 8888, protocol: "http", custom: true, externalHost: "h", externalPort: 30002 },
        ],
      },
    ]);
  });

  it("keeps the previous storages and pod parts that could not be read this time", () => {
    const previous = {
      storages: [{ storageId: "nas-1" }],
      pods: [{ name: "p0", ports: [{ port: 22, custom: false }] }],
    };
    const s = remoteStatus({ task, pods: [{ podName: "p0" }] }, previous);
    expect(s.storages).toEqual([{ storageId: "nas-1" }]);
    expect(s.pods).toEqual([{ name: "p0", ports: [{ port: 22, custom: false }] }]);
  });
});

describe("podPortsStatus", () => {
  it("lists system ports before custom ports, each by number", () => {
    const ports = podPortsStatus({
      ports: [{ port: 23 }, { port: 22 }],
      customPorts: [{ port: 9000 }, { port: 8000 }],
    });
    expect(ports.map((p) => [p.port, p.custom])).toEqual([
      [22, false],
      [23, false],
      [8000, true],
      [9000, true],
    ]);
  });
});

describe("remoteDescription", () => {
  it("hides a client-token marker from the comparison with the spec", () => {
    expect(remoteDescription({ ...task, desc: "hello [aidc-token:abc]" })).toBe("hello");
  });
});

describe("configStatus", () => {
  it("shows a COPY task's inherited configuration and its source, env names without values", () => {
    const copied: TrainingTask = {
      ...task,
      name: "copy-1",
      createType: "COPY",
      sourceTaskId: "task-0",
      templateId: "tpl-ignored",
      image: "registry.local/train:1",
      imageType: "private",
      trainingType: "PRE_TRAINING",
      trainingFramework: "PyTorch",
      startCommand: "python train.py",
      enableAutoRetry: true,
      maxRetryCount: 2,
      enableTimeoutCancel: false,
      env: { TOKEN: "s3cr3t", A_FIRST: "1" },
    };
    const config = configStatus(copied);
    expect(config).toEqual({
      name: "copy-1",
      source: { type: "COPY", id: "task-0" },
      image: "registry.local/train:1",
      imageType: "private",
      trainingType: "PRE_TRAINING",
      trainingFramework: "PyTorch",
      productCode: "train.cpu.16",
      workerCount: 2,
      priority: 1,
      startCommand: "python train.py",
      enableAutoRetry: true,
      maxRetryCount: 2,
      enableTimeoutCancel: false,
      envKeys: ["A_FIRST", "TOKEN"],
    });
    expect(JSON.stringify(config)).not.toContain("s3cr3t");
  });

  it("names a TEMPLATE task's template and no id for a DIRECT task", () => {
    expect(configStatus({ ...task, createType: "TEMPLATE", templateId: "tpl-1" }).source).toEqual({
      type: "TEMPLATE",
      id: "tpl-1",
    });
    expect(configStatus({ ...task, createType: "DIRECT", templateId: "x" }).source).toEqual({
      type: "DIRECT",
    });
  });

  it("cuts the start command and the env names at their bounds", () => {
    const env = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`K${i}`, "v"]));
    const config = configStatus({ ...task, env, startCommand: "x".repeat(10_000) });
    expect(config.envKeys).toHaveLength(MAX_ENV_KEYS);
    expect(config.startCommand).toHaveLength(MAX_START_COMMAND_CHARS);
  });
});
