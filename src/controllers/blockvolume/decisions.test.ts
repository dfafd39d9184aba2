import { describe, expect, it } from "vitest";
import {
  type AttachmentAction,
  type AttachmentInput,
  decideAttachment,
  decideDeleteAttachment,
  volumePhase,
  volumeReady,
} from "./decisions.js";

describe("decideAttachment", () => {
  const cases: [string, AttachmentInput, AttachmentAction][] = [
    [
      "attaches an available volume where the spec asks",
      { desired: "i-1", state: "available", attachedTo: undefined, ours: undefined },
      { action: "Attach", instanceId: "i-1" },
    ],
    [
      "attaches again after a crash left the attachment recorded but not made",
      { desired: "i-1", state: "available", attachedTo: undefined, ours: "i-1" },
      { action: "Attach", instanceId: "i-1" },
    ],
    [
      "is in sync when attached where the spec asks and recorded",
      { desired: "i-1", state: "in-use", attachedTo: "i-1", ours: "i-1" },
      { action: "InSync" },
    ],
    [
      "records an attachment someone made where the spec asks",
      { desired: "i-1", state: "in-use", attachedTo: "i-1", ours: undefined },
      { action: "Record", instanceId: "i-1" },
    ],
    [
      "detaches its own attachment to move the volume",
      { desired: "i-2", state: "in-use", attachedTo: "i-1", ours: "i-1" },
      { action: "Detach", instanceId: "i-1", next: "i-2" },
    ],
    [
      "detaches its own attachment when the spec asks for none",
      { desired: undefined, state: "in-use", attachedTo: "i-1", ours: "i-1" },
      { action: "Detach", instanceId: "i-1", next: undefined },
    ],
    [
      "never detaches an attachment someone else made",
      { desired: "i-2", state: "in-use", attachedTo: "i-3", ours: "i-1" },
      { action: "Foreign", instanceId: "i-3" },
    ],
    [
      "never detaches an attachment someone else made when the spec asks for none",
      { desired: undefined, state: "in-use", attachedTo: "i-3", ours: undefined },
      { action: "Foreign", instanceId: "i-3" },
    ],
    [
      "waits while the service detaches",
      { desired: "i-2", state: "detaching", attachedTo: "i-1", ours: undefined },
      { action: "Wait", message: "the volume is detaching" },
    ],
    [
      "waits while the volume is created",
      { desired: "i-2", state: "creating", attachedTo: undefined, ours: undefined },
      { action: "Wait", message: "the volume is creating" },
    ],
    [
      "changes nothing in a state it does not know",
      { desired: "i-2", state: "Resizing", attachedTo: undefined, ours: undefined },
      {
        action: "Wait",
        message: "the volume is Resizing; it can be attached once available",
      },
    ],
    [
      "forgets a recorded attachment of a detached volume the spec wants detached",
      { desired: undefined, state: "available", attachedTo: undefined, ours: "i-1" },
      { action: "Forget" },
    ],
    [
      "is in sync detached",
      { desired: undefined, state: "available", attachedTo: undefined, ours: undefined },
      { action: "InSync" },
    ],
  ];
  it.each(cases)("%s", (_name, input, expected) => {
    expect(decideAttachment(input)).toEqual(expected);
  });
});

describe("decideDeleteAttachment", () => {
  it.each([
    [
      "detaches an adopted volume attached where the spec asks, not yet recorded",
      { state: "in-use", attachedTo: "i-1", ours: undefined, asked: "i-1" },
      { action: "Detach", instanceId: "i-1", next: undefined },
    ],
    [
      "detaches the recorded attachment when the spec now asks for another instance",
      { state: "in-use", attachedTo: "i-1", ours: "i-1", asked: "i-2" },
      { action: "Detach", instanceId: "i-1", next: undefined },
    ],
    [
      "detaches where the spec asks even when another attachment was recorded",
      { state: "in-use", attachedTo: "i-2", ours: "i-1", asked: "i-2" },
      { action: "Detach", instanceId: "i-2", next: undefined },
    ],
    [
      "never detaches an attachment neither recorded nor asked for",
      { state: "in-use", attachedTo: "i-3", ours: "i-1", asked: "i-2" },
      { action: "Foreign", instanceId: "i-3" },
    ],
    [
      "never detaches an unrecorded attachment when the spec asks for none",
      { state: "in-use", attachedTo: "i-3", ours: undefined, asked: undefined },
      { action: "Foreign", instanceId: "i-3" },
    ],
    [
      "is done with a detached volume",
      { state: "available", attachedTo: undefined, ours: undefined, asked: "i-1" },
      { action: "InSync" },
    ],
  ] as const)("%s", (_name, input, expected) => {
    expect(decideDeleteAttachment(input)).toEqual(expected);
  });
});

describe("volumeReady", () => {
  it.each([
    ["in-use", "i-1", { action: "InSync" }, "True", "Attached"],
    ["available", undefined, { action: "InSync" }, "True", "Detached"],
    ["error", undefined, { action: "Wait", message: "" }, "False", "VolumeFailed"],
    ["creating", undefined, { action: "Wait", message: "" }, "False", "Creating"],
    ["in-use", "i-3", { action: "Foreign", instanceId: "i-3" }, "False", "AttachedElsewhere"],
    ["available", undefined, { action: "Attach", instanceId: "i-1" }, "False", "Attaching"],
    ["in-use", "i-1", { action: "Detach", instanceId: "i-1", next: "i-2" }, "False", "Attaching"],
    [
      "in-use",
      "i-1",
      { action: "Detach", instanceId: "i-1", next: undefined },
      "False",
      "Detaching",
    ],
    ["Resizing", undefined, { action: "Wait", message: "x" }, "False", "VolumeUnavailable"],
  ] as const)("a volume %s on %s with %o is Ready %s %s", (state, on, action, status, reason) => {
    const ready = volumeReady(
      { id: "v", status: state, ...(on ? { instanceId: on } : {}) },
      action as AttachmentAction,
      "i-1",
    );
    expect(ready).toMatchObject({ status, reason });
  });

  it("without Update, says the volume is not moved rather than that it is being attached or detached", () => {
    const cases: [string, string | undefined, AttachmentAction, string | undefined, string][] = [
      ["available", undefined, { action: "Attach", instanceId: "i-2" }, "i-2", "(detached)"],
      [
        "in-use",
        "i-1",
        { action: "Detach", instanceId: "i-1", next: "i-2" },
        "i-2",
        "instance i-1",
      ],
      [
        "in-use",
        "i-1",
        { action: "Detach", instanceId: "i-1", next: undefined },
        undefined,
        "no instance",
      ],
      ["detaching", "i-1", { action: "Wait", message: "the volume is detaching" }, "i-2", "i-2"],
    ];
    for (const [state, on, action, desired, named] of cases) {
      const volume = { id: "v", status: state, ...(on ? { instanceId: on } : {}) };
      const ready = volumeReady(volume, action, desired, false);
      expect(ready.status).toBe("False");
      expect(ready.message).toContain("spec.managementPolicies has no Update, so it is not moved");
      expect(ready.message).toContain(named);
      expect(ready.message).not.toMatch(/^(attaching|detaching|moving)|waiting to attach/);
      expect(volumeReady(volume, action, desired, true).message).not.toContain("no Update");
    }
    // An attach the service is making (sent before) is followed as it is.
    const attaching = { id: "v", status: "attaching", instanceId: "i-2" };
    const waiting: AttachmentAction = { action: "Wait", message: "the volume is attaching" };
    expect(volumeReady(attaching, waiting, "i-2", false).message).toContain("waiting to attach");
  });
});

describe("volumePhase", () => {
  it.each([
    [undefined, false, false, "Pending"],
    [undefined, false, true, "Creating"],
    ["in-use", true, false, "Attached"],
    ["available", true, false, "Available"],
    ["detaching", true, false, "Detaching"],
    ["error", true, false, "Failed"],
    ["Resizing", true, false, "Unknown"],
  ] as const)("state %s, bound %s, creating %s: %s", (state, bound, creating, phase) => {
    expect(volumePhase({ state, bound, creating })).toBe(phase);
  });
});
