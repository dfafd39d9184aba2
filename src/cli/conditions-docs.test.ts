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

  it("says once, above the reasons, what the operator does in each state; a reason only where it differs", () => {
    const page = renderTroubleshootingDocs();
    expect(page.split("holds the object (Stalled=True").length - 1).toBe(1);
    expect(page.indexOf("holds the object (Stalled=True")).toBeLessThan(page.indexOf("## Reasons"));
    expect(operatorLine("CapacityRefused")).toBe("");
    expect(page.split("Nothing: wait").length - 1).toBe(0);
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
