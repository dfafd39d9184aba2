import { describe, expect, it } from "vitest";
import { operatorConfigSchema } from "../config/schema.js";
import { registeredControllers } from "../controllers/permissions.js";
import { checkNamedSettings } from "./named-settings.js";

const every = registeredControllers({ exposure: true, credentialsExport: true });
const configWith = (extra: Record<string, unknown>) =>
  operatorConfigSchema.parse({ service: { baseUrl: "https://x.example" }, ...extra });

describe("checkNamedSettings", () => {
  it("takes every controller's name in concurrency and every polled kind in pollIntervalMs", () => {
    const concurrency = Object.fromEntries(every.map((c) => [c.name, 2]));
    const pollIntervalMs = Object.fromEntries(every.map((c) => [c.primary.kind, 5000]));
    expect(() =>
      checkNamedSettings(configWith({ concurrency, pollIntervalMs }), every),
    ).not.toThrow();
  });

  it("has every controller name the config's description promises: a kind in lower case, or named there", () => {
    const description = operatorConfigSchema.shape.concurrency.description ?? "";
    const kinds = new Set(every.map((c) => c.primary.kind.toLowerCase()));
    const unnamed = every
      .map((c) => c.name)
      .filter((n) => !kinds.has(n) && !description.includes(`\`${n}\``));
    expect(unnamed).toEqual([]);
  });

  it.each([
    {
      reason: "a kind's name where the controller's is meant",
      extra: { concurrency: { NasVolume: 4 } },
      message: /concurrency\.NasVolume: no controller of that name \(.*nasvolume.*\)/,
    },
    {
      reason: "a misspelt kind",
      extra: { pollIntervalMs: { TrainingJobs: 10_000 } },
      message: /pollIntervalMs\.TrainingJobs: no kind polled by that name \(.*TrainingJob.*\)/,
    },
  ])("refuses $reason, naming the entry and the names there are", ({ extra, message }) => {
    expect(() => checkNamedSettings(configWith(extra), every)).toThrow(message);
  });
});
