import { describe, expect, it } from "vitest";
import { AddressAllowList } from "../../config/cidr.js";
import type { TrainingJobObject } from "./objects.js";
import { phaseWithoutRemote, trainingJobExport, trainingJobStatus } from "./status.js";

const job: TrainingJobObject = {
  apiVersion: "aidc.io/v1alpha1",
  kind: "TrainingJob",
  metadata: { name: "train", namespace: "ns", uid: "u" },
  spec: {
    createType: "DIRECT",
    priority: 3,
    exposePorts: true,
    deletionPolicy: "Orphan",
    storage: [{ nasVolumeRef: { name: "data" }, readOnly: true }],
  },
  status: { phase: "Running", remoteStatus: "RUNNING", taskId: "old", conditions: [] },
};

describe("phaseWithoutRemote", () => {
  const cases = [
    { reason: "nothing ordered yet is Pending", facts: {}, want: "Pending" },
    {
      reason: "a pending subscription is Creating",
      facts: { subscriptionKey: "k" },
      want: "Creating",
    },
    {
      reason: "a failed subscription is Failed",
      facts: { subscription: { outcome: "Failed" as const, message: "no" } },
      want: "Failed",
    },
    { reason: "a known task keeps its last phase", facts: { externalId: "t" }, want: "Running" },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      expect(phaseWithoutRemote(c.facts, "Running")).toBe(c.want);
    });
  }
});

describe("trainingJobStatus", () => {
  it("writes only its fact fields when nothing was read (the loop keeps the remote ones)", () => {
    expect(trainingJobStatus(job, { externalId: "task-1" }, undefined)).toEqual({
      phase: "Running",
      taskId: "task-1",
    });
  });

  const withPort = (externalHost: string) =>
    ({
      status: {
        remoteStatus: "PAUSED",
        pods: [{ name: "p0", ports: [{ port: 80, custom: true, externalHost, externalPort: 1 }] }],
      },
    }) as never;
  const gateway = new AddressAllowList(["203.0.113.0/24"]);

  it("classifies the remote status with the configured table and names exposed Services", () => {
    const s = trainingJobStatus(
      job,
      { externalId: "task-1" },
      withPort("203.0.113.10"),
      { PAUSED: "stopped" },
      gateway,
    );
    expect(s.phase).toBe("Stopped");
    expect(JSON.stringify(s.pods)).toContain('"serviceName":"train-');
  });

  it.each(["10.244.1.5", "gw.example.com", "127.0.0.1"])(
    "names no Service for a port whose address %s lies outside the allowed ranges",
    (host) => {
      const s = trainingJobStatus(job, { externalId: "task-1" }, withPort(host), {}, gateway);
      expect(JSON.stringify(s.pods)).not.toContain("serviceName");
    },
  );
});

describe("trainingJobExport", () => {
  it("names the task and, per pod in name order, its name and each port's external address", () => {
    expect(
      trainingJobExport({
        taskId: "t-1",
        pods: [
          {
            name: "w-1",
            ports: [{ port: 8080, custom: true, externalHost: "203.0.113.2", externalPort: 30081 }],
          },
          {
            name: "w-0",
            ports: [
              { port: 22, custom: false, externalHost: "203.0.113.1", externalPort: 30022 },
              { port: 8888, custom: false },
            ],
          },
        ],
      }),
    ).toEqual({
      TASK_ID: "t-1",
      POD_0_NAME: "w-0",
      POD_0_PORT_22: "203.0.113.1:30022",
      POD_1_NAME: "w-1",
      POD_1_PORT_8080: "203.0.113.2:30081",
    });
  });
});
