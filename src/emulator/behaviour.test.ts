import { describe, expect, it } from "vitest";
import { EMULATOR_MODES, emulatorModes } from "./behaviour.js";

describe("emulator modes", () => {
  it("are the behaviour's boolean switches, by the names behaviour.ts gives them", () => {
    expect(EMULATOR_MODES).toEqual([
      "failedOrdersLeaveResources",
      "httpStatusMirrorsEnvelope",
      "listsOmitDescription",
      "listsOmitEnv",
    ]);
  });

  it("turns the named modes on, and refuses an unknown name naming it", () => {
    expect(emulatorModes(["listsOmitEnv", "listsOmitDescription"])).toEqual({
      listsOmitEnv: true,
      listsOmitDescription: true,
    });
    expect(emulatorModes([])).toEqual({});
    expect(() => emulatorModes(["listsOmitEnv", "listsOmitEnvs"])).toThrow(
      /unknown emulator mode "listsOmitEnvs" \(modes: failedOrdersLeaveResources, /,
    );
    expect(() => emulatorModes(["pageSizeCap"])).toThrow(/"pageSizeCap"/);
  });
});
