import { describe, expect, it } from "vitest";
import { TRAINING_JOB_MUTABILITY } from "../../crds/trainingjob.js";
import { taskFixedFields } from "./fixed-fields.js";
import type { TrainingJobObject, TrainingJobRemote } from "./objects.js";

const task = {
  id: "task-1",
  name: "outside",
  image: "registry.example.com/ml/train:1",
  trainingFramework: "pytorch",
  priority: 3,
  resource: { productCode: "train.cpu.16", workerCount: 1 },
  env: { EXTRA: "x" },
};

function diffs(spec: Record<string, unknown>) {
  const obj = { metadata: { namespace: "a", name: "job" }, spec } as unknown as TrainingJobObject;
  const remote = { observation: { task } } as unknown as TrainingJobRemote;
  return taskFixedFields(obj, remote);
}

describe("taskFixedFields", () => {
  it.each([
    {
      reason: "a spec that says what the task is contradicts nothing",
      spec: { image: task.image, productCode: "train.cpu.16", workerCount: 1 },
      want: [],
    },
    {
      reason: "a field the spec leaves to a template or the default contradicts nothing",
      spec: { templateRef: { name: "t" } },
      want: [],
    },
    {
      reason: "a word in another case is the same word",
      spec: { trainingFramework: "PyTorch" },
      want: [],
    },
    {
      reason: "env is not compared (the task's holds more than the user's)",
      spec: { env: { EXTRA: "y" } },
      want: [],
    },
    {
      reason: "product, workers, name and priority differ: each named with both values",
      spec: { taskName: "mine", productCode: "train.gpu.a100.8", workerCount: 2, priority: 1 },
      want: [
        { field: "taskName", spec: "mine", remote: "outside" },
        { field: "productCode", spec: "train.gpu.a100.8", remote: "train.cpu.16" },
        { field: "workerCount", spec: 2, remote: 1 },
        { field: "priority", spec: 1, remote: 3 },
      ],
    },
  ])("$reason", ({ spec, want }) => {
    expect(diffs(spec)).toEqual(want);
  });

  it("compares only fields the service cannot change (TRAINING_JOB_MUTABILITY)", () => {
    const all = {
      taskName: "x",
      productCode: "x",
      workerCount: 9,
      image: "x",
      imageType: "x",
      trainingType: "x",
      trainingFramework: "x",
      priority: 9,
      startCommand: "x",
      enableAutoRetry: true,
      maxRetryCount: 9,
      enableTimeoutCancel: true,
      timeoutHours: 9,
    };
    const full = {
      ...task,
      imageType: "y",
      trainingType: "y",
      startCommand: "y",
      enableAutoRetry: false,
      maxRetryCount: 0,
      enableTimeoutCancel: false,
      timeoutHours: 0,
    };
    const obj = { metadata: {}, spec: all } as unknown as TrainingJobObject;
    const compared = taskFixedFields(obj, {
      observation: { task: full },
    } as unknown as TrainingJobRemote).map((d) => d.field);
    expect(compared.sort()).toEqual(Object.keys(all).sort());
    const fixed = TRAINING_JOB_MUTABILITY.filter(
      (r) => r.owner === "service" && r.mutability === "immutable",
    ).map((r) => r.field);
    for (const field of compared) expect(fixed).toContain(field);
  });
});
