import { describe, expect, it } from "vitest";
import { KIND_SETTING_NAMES, kindSettingDefaults, kindSettingFlag } from "./kind-settings.js";
import { DEFAULT_BEHAVIOUR } from "./state.js";

describe("kind settings", () => {
  it("gathers each kind's settings module into the emulator's default behaviour", () => {
    expect(KIND_SETTING_NAMES).toEqual(
      expect.arrayContaining(["volumeTransitionMs", "fileStorageDelayMs"]),
    );
    expect(kindSettingDefaults()).toMatchObject({
      volumeTransitionMs: 1000,
      fileStorageDelayMs: 1000,
    });
    expect(DEFAULT_BEHAVIOUR).toMatchObject(kindSettingDefaults());
  });

  it("names a setting's CLI flag in kebab case", () => {
    expect(kindSettingFlag("volumeTransitionMs")).toBe("volume-transition-ms");
    expect(kindSettingFlag("fileStorageDelayMs")).toBe("file-storage-delay-ms");
  });
});
