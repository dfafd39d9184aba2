import { describe, expect, it } from "vitest";
import type { TrainingJobStatus } from "../../crds/trainingjob.js";
import { FullReads, listedStatusCurrent } from "./listed-task.js";
import { remoteStatus } from "./remote.js";

describe("FullReads", () => {
  it("is due for a task never read in detail, and again once the interval has passed", () => {
    let now = 0;
    const reads = new FullReads(1_000, () => now);
    expect(reads.due("t")).toBe(true);
    reads.record("t");
    now = 999;
    expect(reads.due("t")).toBe(false);
    now = 1_000;
    expect(reads.due("t")).toBe(true);
    reads.record("t");
    reads.forget("t");
    expect(reads.due("t")).toBe(true);
  });
});

describe("listedStatusCurrent", () => {
  const task = {
    id: "t1",
    status: "RUNNING",
    lastUpdateTime: "2026-01-01T00:00:00Z",
    execInfos: [{ status: "RUNNING", info: "started", createTime: "2026-01-01T00:00:00Z" }],
  };
  // As the API server answers it: keys sorted, pods and storages from the last detail read.
  const shown = {
    execInfos: [{ createTime: "2026-01-01T00:00:00Z", info: "started", status: "RUNNING" }],
    lastUpdateTime: "2026-01-01T00:00:00Z",
    phase: "Running",
    pods: [{ name: "p0", containers: [{ name: "c", restartCount: 0 }] }],
    remoteStatus: "RUNNING",
    storages: [{ storageId: "nas-1" }],
  } as unknown as TrainingJobStatus;

  it("holds when the listed task implies the status shown, key order aside", () => {
    expect(listedStatusCurrent(remoteStatus({ task, fromList: true }, shown), shown)).toBe(true);
  });

  it("fails on any change of the task: its status, its update time, a new execution record", () => {
    const changed = [
      { ...task, status: "FAILED" },
      { ...task, lastUpdateTime: "2026-01-01T00:00:05Z" },
      { ...task, execInfos: [...task.execInfos, { status: "RUNNING", info: "restarted" }] },
      { ...task, priority: 3 },
    ];
    for (const t of changed) {
      expect(listedStatusCurrent(remoteStatus({ task: t, fromList: true }, shown), shown)).toBe(
        false,
      );
    }
  });

  it("fails without a status to compare with", () => {
    expect(listedStatusCurrent(remoteStatus({ task, fromList: true }, undefined), undefined)).toBe(
      false,
    );
  });
});
