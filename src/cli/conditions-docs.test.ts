import { describe, expect, it } from "vitest";
import { renderConditionDocs, renderTroubleshootingDocs } from "./conditions-docs.js";

/** The "The operator:" line of `reason`'s section of docs/troubleshooting.md. */
function operatorLine(reason: string): string {
  const section = renderTroubleshootingDocs().split(`### ${reason}\n`)[1]?.split("\n### ")[0];
  return section?.split("\n").find((l) => l.startsWith("- **The operator:**")) ?? "";
}

describe("docs/troubleshooting.md, what the operator does while a reason stands", () => {
  it("says a paused object is not polled, not the resting state's 'keeps polling'", () => {
    expect(operatorLine("ReconcilePaused")).toContain("no poll");
    expect(operatorLine("ReconcilePaused")).not.toContain("Keeps polling");
  });

  it("says a terminal state read from the remote resource is read again on every poll, not held", () => {
    for (const reason of ["DriftDetected", "TaskFailed", "VolumeFailed", "InstanceFailed"]) {
      expect(operatorLine(reason), reason).toContain("on every poll");
      expect(operatorLine(reason), reason).not.toContain("Holds the object");
    }
  });

  it("keeps the hold's answer for a refusal the operator holds", () => {
    expect(operatorLine("CapacityRefused")).toContain("Holds the object");
  });
});

describe("docs/conditions.md, the kinds of a reason", () => {
  const row = (reason: string) =>
    renderConditionDocs()
      .split("\n")
      .find((l) => l.startsWith(`| \`${reason}\` |`)) ?? "";

  it("names the kinds a reason of the service kinds leaves out, and says every kind for all", () => {
    expect(row("ConnectionNotFound")).toContain("| all but ServiceConnection |");
    expect(row("ApiKeyRefused")).toContain("| every kind |");
  });
});
