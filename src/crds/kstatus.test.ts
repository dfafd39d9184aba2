import { describe, expect, it } from "vitest";
import { kstatusCondition } from "./kstatus.js";
import { CONDITION_REASONS, isTerminalReason, terminalReasonsOf } from "./reasons.js";

const c = (type: string, status: string, reason: string, message = "") => ({
  type,
  status,
  reason,
  message,
});

describe("kstatusCondition", () => {
  const cases = [
    {
      reason: "a ready object has neither Reconciling nor Stalled",
      conditions: [c("Ready", "True", "TaskRunning"), c("Synced", "True", "ReconcileSuccess")],
      want: undefined,
    },
    {
      reason: "a create under way is Reconciling",
      conditions: [
        c("Ready", "False", "Creating", "pending"),
        c("Synced", "True", "ReconcileSuccess"),
      ],
      want: { type: "Reconciling", reason: "Creating", message: "Ready is False: pending" },
    },
    {
      reason: "a retryable error is Reconciling",
      conditions: [c("Ready", "True", "Available"), c("Synced", "False", "ReconcileError", "503")],
      want: { type: "Reconciling", reason: "ReconcileError" },
    },
    {
      reason: "a failed task is Stalled",
      conditions: [
        c("Ready", "False", "TaskFailed", "OOM"),
        c("Synced", "True", "ReconcileSuccess"),
      ],
      want: { type: "Stalled", reason: "TaskFailed", message: "Ready is False: OOM" },
    },
    {
      reason: "a 403 is Stalled even while Ready is still True",
      conditions: [c("Ready", "True", "Running"), c("Synced", "False", "ApiKeyRefused", "403")],
      want: { type: "Stalled", reason: "ApiKeyRefused" },
    },
    {
      reason: "Stalled wins over work under way",
      conditions: [c("Ready", "False", "Creating"), c("Synced", "False", "CreateOutcomeUnknown")],
      want: { type: "Stalled", reason: "CreateOutcomeUnknown" },
    },
    {
      reason: "a stopped task is neither (resting)",
      conditions: [c("Ready", "False", "TaskStopped"), c("Synced", "True", "ReconcileSuccess")],
      want: undefined,
    },
    {
      reason: "a terminal reason on another condition does not stall the object",
      conditions: [
        c("Ready", "True", "TaskRunning"),
        c("Synced", "True", "ReconcileSuccess"),
        c("DeletionPolicy", "False", "NoDeleteOperation"),
      ],
      want: undefined,
    },
    {
      reason: "the previous Reconciling and Stalled are ignored",
      conditions: [
        c("Ready", "True", "Available"),
        c("Synced", "True", "ReconcileSuccess"),
        c("Stalled", "True", "TaskFailed"),
        c("Reconciling", "True", "Creating"),
      ],
      want: undefined,
    },
  ];
  for (const t of cases) {
    it(t.reason, () => {
      const got = kstatusCondition(t.conditions);
      if (t.want === undefined) expect(got).toBeUndefined();
      else expect(got).toMatchObject({ status: "True", ...t.want });
    });
  }
});

describe("the reason table", () => {
  it("spells every reason in PascalCase, as metav1.Condition requires", () => {
    for (const reason of Object.keys(CONDITION_REASONS)) {
      expect(reason).toMatch(/^[A-Z][A-Za-z0-9]*$/);
    }
  });

  it("makes a 403 terminal for every kind", () => {
    for (const kind of ["TrainingJob", "NasVolume", "CciInstance", "TrainingTemplate"]) {
      expect(terminalReasonsOf(kind)).toContain("ApiKeyRefused");
      expect(terminalReasonsOf(kind)).toContain("ReconcileTerminal");
    }
    expect(isTerminalReason("ReconcileError")).toBe(false);
    expect(isTerminalReason("NotOneOfOurs")).toBe(false);
  });
});
