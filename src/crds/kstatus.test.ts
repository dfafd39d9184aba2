import { describe, expect, it } from "vitest";
import { allCrds, REASONS } from "./index.js";
import { ReasonTable } from "./reason-table.js";
import { CONDITION_REASONS, ownReason, ownReasons } from "./reasons.js";

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
      const got = REASONS.kstatusCondition(t.conditions);
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
    for (const { kind } of allCrds.filter((c) => c.remote !== "none")) {
      expect(REASONS.reasonsOf(kind, "Terminal")).toContain("ApiKeyRefused");
      expect(REASONS.reasonsOf(kind, "Terminal")).toContain("ReconcileTerminal");
    }
    expect(REASONS.isTerminal("ReconcileError")).toBe(false);
    expect(REASONS.isTerminal("NotOneOfOurs")).toBe(false);
  });
});

describe("the reason table of a set of kinds", () => {
  const widget = {
    kind: "Widget",
    remote: "managed" as const,
    reasons: ownReasons({
      WidgetJammed: ownReason("Terminal", ["Synced"], "The widget is jammed."),
      WidgetWinding: ownReason("UnderWay", ["Ready"], "The widget is being wound."),
    }),
  };
  const gadget = { kind: "Gadget", remote: "observed" as const };

  it("gives a new kind the shared reasons of its groups, with no edit of the shared table", () => {
    const table = new ReasonTable([widget, gadget]);
    expect(table.entry("ApiKeyRefused")?.kinds).toEqual(["Widget", "Gadget"]);
    expect(table.entry("CreateFailed")?.kinds).toEqual(["Widget"]);
    expect(table.reasonsOf("Gadget", "Terminal")).not.toContain("CreateFailed");
  });

  it("lets a kind join a shared row of the kinds that join it, from its own module", () => {
    const joining = { ...gadget, sharedReasons: ["Available", "Resolved"] as const };
    const table = new ReasonTable([widget, joining]);
    expect(table.entry("Available")?.kinds).toEqual(["Gadget"]);
    expect(table.entry("Resolved")?.kinds).toContain("Gadget");
    expect(table.entry("Resolved")?.kinds).not.toContain("Widget");
    expect(new ReasonTable([widget, gadget]).entry("Available")?.kinds).not.toContain("Gadget");
    // The registered kinds that joined: the rows name them as before.
    expect(REASONS.entry("Available")?.kinds).toContain("FileSystem");
    expect(REASONS.entry("Resolved")?.kinds).toEqual(expect.arrayContaining(["BlockVolume"]));
  });

  it("refuses to join a row twice, a row of a group, or a row that is not shared", () => {
    const twice = { ...gadget, sharedReasons: ["Available", "Available"] as const };
    expect(() => new ReasonTable([twice])).toThrow(
      "Gadget joins reason Available, which names it already",
    );
    const grouped = { ...gadget, sharedReasons: ["ApiKeyRefused"] as const };
    expect(() => new ReasonTable([grouped])).toThrow(
      "Gadget joins reason ApiKeyRefused, which applies to every kind",
    );
    const unknown = { ...gadget, sharedReasons: ["GadgetJammed"] as never };
    expect(() => new ReasonTable([unknown])).toThrow("which is not shared");
  });

  it("adds a kind's own reasons, for that kind only, to kstatus and the terminal lists", () => {
    const table = new ReasonTable([widget, gadget]);
    expect(table.reasonsOf("Widget", "Terminal")).toContain("WidgetJammed");
    expect(table.reasonsOf("Gadget", "Terminal")).not.toContain("WidgetJammed");
    const jammed = { type: "Synced", status: "False", reason: "WidgetJammed", message: "stuck" };
    expect(table.kstatusCondition([jammed])).toMatchObject({ type: "Stalled" });
    const winding = { type: "Ready", status: "False", reason: "WidgetWinding", message: "" };
    expect(table.kstatusCondition([winding])).toMatchObject({ type: "Reconciling" });
    expect(REASONS.kstatusCondition([winding])).toBeUndefined();
  });

  it("refuses a kind's own reason that the shared table or another kind has", () => {
    const shadow = { ...gadget, reasons: ownReasons({ CreateFailed: ownReason("Ok", [], "") }) };
    expect(() => new ReasonTable([widget, shadow])).toThrow(
      "reason CreateFailed of Gadget is already in the reason table",
    );
    const twin = { ...gadget, reasons: widget.reasons };
    expect(() => new ReasonTable([widget, twin])).toThrow(/WidgetJammed of Gadget .*\(Widget\)/);
  });

  it("refuses an own reason that is not PascalCase", () => {
    expect(() => ownReasons({ widget_jammed: ownReason("Terminal", [], "") })).toThrow(
      "not PascalCase",
    );
  });
});
