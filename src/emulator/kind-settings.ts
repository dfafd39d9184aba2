/**
 * The emulator settings the kinds declare in their own src/emulator/kinds/<kind>.settings.ts
 * (gathered by scripts/generate-kind-index.ts into kinds/settings-index.ts): each a
 * non-negative integer with a default, part of `EmulatorBehaviour` (state.ts) under its name,
 * so the state's defaults, the admin API's config, the start options and the CLI's flags
 * take a kind's settings without an edit of their own.
 */
import { KIND_SETTINGS } from "./kinds/settings-index.js";

/** The name of a kind's emulator setting (e.g. `volumeTransitionMs`). */
export type KindSettingName = keyof typeof KIND_SETTINGS;

/** The kinds' settings as the emulator's behaviour holds them. */
export type KindBehaviour = { [K in KindSettingName]: number };

/** Every kind's setting names. */
export const KIND_SETTING_NAMES = Object.keys(KIND_SETTINGS) as KindSettingName[];

/** Each kind setting's default. */
export function kindSettingDefaults(): KindBehaviour {
  return Object.fromEntries(
    KIND_SETTING_NAMES.map((name) => [name, KIND_SETTINGS[name].default]),
  ) as KindBehaviour;
}

/** The description of a kind setting (the CLI's help of its flag). */
export function kindSettingDescription(name: KindSettingName): string {
  return KIND_SETTINGS[name].description;
}

/** The CLI flag of a kind setting, without dashes: its name in kebab case. */
export function kindSettingFlag(name: KindSettingName): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
