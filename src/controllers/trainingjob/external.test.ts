import { describe, expect, it } from "vitest";
import { mayHaveExposure } from "./external.js";
import type { TrainingJobObject } from "./objects.js";

function job(exposePorts: boolean, serviceName?: string): TrainingJobObject {
  return {
    apiVersion: "aidc.io/v1alpha1",
    kind: "TrainingJob",
    metadata: { name: "j", namespace: "ns" },
    spec: { createType: "DIRECT", priority: 3, exposePorts, deletionPolicy: "Orphan" },
    status: {
      pods: [
        { name: "p", ports: [{ port: 80, custom: true, ...(serviceName ? { serviceName } : {}) }] },
      ],
    },
  };
}

describe("mayHaveExposure", () => {
  const cases = [
    { reason: "exposePorts on lists the exposure", job: job(true), want: true },
    { reason: "a job that never exposed skips the list", job: job(false), want: false },
    {
      reason: "a job just switched off lists it to delete what its status still names",
      job: job(false, "j-abc-80"),
      want: true,
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      expect(mayHaveExposure(c.job)).toBe(c.want);
    });
  }
});
