import { describe, expect, it } from "vitest";
import { classifyTaskStatus, phaseOf, readyOf, type TaskStatusTable } from "./status-class.js";

describe("classifyTaskStatus", () => {
  const cases: {
    reason: string;
    status: string | undefined;
    overrides?: TaskStatusTable;
    want: ReturnType<typeof classifyTaskStatus>;
  }[] = [
    { reason: "the documented RUNNING is running", status: "RUNNING", want: "running" },
    { reason: "letter case and separators do not matter", status: "Running", want: "running" },
    { reason: "PENDING waits", status: "PENDING", want: "pending" },
    { reason: "SUCCEEDED finished well", status: "SUCCEEDED", want: "succeeded" },
    { reason: "FAILED failed", status: "FAILED", want: "failed" },
    { reason: "CANCELLED is stopped", status: "cancelled", want: "stopped" },
    { reason: "an unknown word is unclassified", status: "HIBERNATING", want: undefined },
    { reason: "an empty status is unclassified", status: "  ", want: undefined },
    { reason: "no status is unclassified", status: undefined, want: undefined },
    {
      reason: "the configured table adds words",
      status: "HIBERNATING",
      overrides: { hibernating: "stopped" },
      want: "stopped",
    },
    {
      reason: "the configured table wins over a default",
      status: "ERROR",
      overrides: { ERROR: "pending" },
      want: "pending",
    },
  ];
  for (const c of cases) {
    it(`classifies ${JSON.stringify(c.status)} as ${c.want}: ${c.reason}`, () => {
      expect(classifyTaskStatus(c.status, c.overrides)).toBe(c.want);
    });
  }
});

describe("phaseOf and readyOf", () => {
  it("maps each class to its phase and unknown to Unknown", () => {
    expect(phaseOf("pending")).toBe("Starting");
    expect(phaseOf("running")).toBe("Running");
    expect(phaseOf("succeeded")).toBe("Succeeded");
    expect(phaseOf("failed")).toBe("Failed");
    expect(phaseOf("stopped")).toBe("Stopped");
    expect(phaseOf(undefined)).toBe("Unknown");
  });

  it("is Ready while the task runs and once it finished successfully", () => {
    expect(readyOf("running", "RUNNING", undefined).status).toBe("True");
    expect(readyOf("succeeded", "SUCCEEDED", undefined)).toMatchObject({
      status: "True",
      reason: "TaskSucceeded",
    });
    for (const cls of ["pending", "failed", "stopped"] as const) {
      expect(readyOf(cls, "X", undefined).status).toBe("False");
    }
    expect(readyOf(undefined, "ODD", undefined).status).toBe("Unknown");
  });

  it("puts a failed task's last execution record into a terminal TaskFailed reason", () => {
    const r = readyOf("failed", "FAILED", "OOMKilled in worker-0");
    expect(r).toEqual({
      status: "False",
      reason: "TaskFailed",
      message: "the task is FAILED: OOMKilled in worker-0",
    });
  });

  it("names an unknown status and where to map it", () => {
    expect(readyOf(undefined, "ODD", undefined).message).toContain('"ODD"');
  });
});
