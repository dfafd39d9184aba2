import { describe, expect, it } from "vitest";
import type { TrainingJobSpec } from "../../crds/trainingjob.js";
import type { TrainingProduct } from "../../service/index.js";
import { formatOwnerMark, ownerMark } from "../managed/tenancy.js";
import type { TrainingJobObject } from "./objects.js";
import type { ResolvedReferences } from "./references.js";
import { buildCreateRequest, checkTrainingProduct, taskNameOf } from "./request.js";

function job(spec: Partial<TrainingJobSpec>): TrainingJobObject {
  return {
    apiVersion: "aidc.io/v1alpha1",
    kind: "TrainingJob",
    metadata: { name: "tj", namespace: "ns" },
    spec: {
      createType: "DIRECT",
      exposePorts: false,
      deletionPolicy: "Orphan",
      ...spec,
    },
  };
}
const noRefs: ResolvedReferences = { storageConfigs: [], inherited: {} };
const direct = { image: "img:1", productCode: "train.cpu.16", workerCount: 2 };

/** The owner mark of TrainingJob ns/tj (managed/tenancy.ts). */
const OWNER = formatOwnerMark(ownerMark("ns", "tj"));

describe("buildCreateRequest", () => {
  it("sends the spec's fields, the task name and the client token as an env var", () => {
    const r = buildCreateRequest(
      job({
        ...direct,
        taskName: "my-task",
        description: "d",
        trainingFramework: "PyTorch",
        env: { A: "1" },
        enableAutoRetry: true,
        maxRetryCount: 2,
      }),
      { ...noRefs, storageConfigs: [{ storageId: "nas-1", onlyRead: true }] },
      "tok",
    );
    expect(r).toEqual({
      ok: true,
      request: {
        name: "my-task",
        createType: "DIRECT",
        image: "img:1",
        productCode: "train.cpu.16",
        workerCount: 2,
        desc: "d",
        priority: 3,
        trainingFramework: "PyTorch",
        enableAutoRetry: true,
        maxRetryCount: 2,
        env: { A: "1", AIDC_CLIENT_TOKEN: "tok", AIDC_OWNER: OWNER },
        storageConfigs: [{ storageId: "nas-1", onlyRead: true }],
      },
    });
  });

  it("names the task after the object when taskName is absent", () => {
    expect(taskNameOf(job(direct))).toBe("tj");
  });

  it("lets the client token win over a user env var of the same name", () => {
    const r = buildCreateRequest(
      job({ ...direct, env: { AIDC_CLIENT_TOKEN: "x", AIDC_OWNER: "y" } }),
      noRefs,
      "t",
    );
    expect(r.ok && r.request.env).toEqual({ AIDC_CLIENT_TOKEN: "t", AIDC_OWNER: OWNER });
  });

  it("fills omitted fields from the template and sends its id", () => {
    const r = buildCreateRequest(
      job({ createType: "TEMPLATE", templateRef: { name: "tpl" }, workerCount: 4 }),
      {
        storageConfigs: [],
        templateId: "tpl-1",
        inherited: {
          image: "tpl:1",
          productCode: "train.cpu.16",
          workerCount: 1,
          startCommand: "go",
        },
      },
      "t",
    );
    expect(r.ok && r.request).toMatchObject({
      createType: "TEMPLATE",
      templateId: "tpl-1",
      image: "tpl:1",
      workerCount: 4,
      startCommand: "go",
    });
  });

  it("sends the template's priority 1 when the job sets none (no silent 3)", () => {
    const r = buildCreateRequest(
      job({ createType: "TEMPLATE", templateRef: { name: "tpl" } }),
      { storageConfigs: [], templateId: "tpl-1", inherited: { ...direct, priority: 1 } },
      "t",
    );
    expect(r.ok && r.request.priority).toBe(1);
  });

  it("sends the job's own priority over the template's", () => {
    const r = buildCreateRequest(
      job({ createType: "TEMPLATE", templateRef: { name: "tpl" }, priority: 2 }),
      { storageConfigs: [], templateId: "tpl-1", inherited: { ...direct, priority: 1 } },
      "t",
    );
    expect(r.ok && r.request.priority).toBe(2);
  });

  it("sends priority 3, the service's default, when neither the job nor its source sets one", () => {
    const r = buildCreateRequest(job(direct), noRefs, "t");
    expect(r.ok && r.request.priority).toBe(3);
  });

  it("sends the source task id for a copy", () => {
    const r = buildCreateRequest(
      job({ createType: "COPY", copyFrom: { name: "s" } }),
      { storageConfigs: [], sourceTaskId: "task-1", inherited: direct },
      "t",
    );
    expect(r.ok && r.request.sourceTaskId).toBe("task-1");
  });

  it("reports the required fields that nothing gives", () => {
    const r = buildCreateRequest(job({ createType: "COPY", copyFrom: { name: "s" } }), noRefs, "t");
    expect(r).toEqual({ ok: false, missing: ["image", "productCode", "workerCount"] });
  });
});

describe("checkTrainingProduct", () => {
  const products: TrainingProduct[] = [
    { name: "cpu", productCode: "train.cpu.16", remainingCount: 5 },
    { name: "gpu", productCode: "train.gpu", remainingCount: 0 },
    { name: "any", productCode: "train.any" },
  ];
  const cases: { reason: string; code: string; workers: number; want: string | undefined }[] = [
    { reason: "enough units pass", code: "train.cpu.16", workers: 5, want: undefined },
    {
      reason: "an unknown product is refused",
      code: "nope",
      workers: 1,
      want: "UnknownProductRefused",
    },
    {
      reason: "too few units wait",
      code: "train.cpu.16",
      workers: 6,
      want: "InsufficientCapacity",
    },
    { reason: "sold out waits", code: "train.gpu", workers: 1, want: "InsufficientCapacity" },
    {
      reason: "an unknown remaining count passes",
      code: "train.any",
      workers: 99,
      want: undefined,
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      expect(checkTrainingProduct(products, c.code, c.workers)?.reason).toBe(c.want);
    });
  }

  it("says how many units the job needs and where to watch them", () => {
    expect(checkTrainingProduct(products, "train.gpu", 1)?.message).toBe(
      "product train.gpu has 0 units left, fewer than spec.workerCount (1); no order is placed until enough are available (REMAINING of kubectl get trainingproducts -l aidc.io/connection=default_connection)",
    );
  });

  it("lists the products of the object's ServiceConnection alone, not every account's", () => {
    expect(checkTrainingProduct(products, "nope", 1, "team-a")?.message).toContain(
      "list them with kubectl get trainingproducts -l aidc.io/connection=team-a)",
    );
    expect(checkTrainingProduct(products, "train.gpu", 1, "team-a")?.message).toContain(
      "(REMAINING of kubectl get trainingproducts -l aidc.io/connection=team-a)",
    );
  });

  it("polls again for capacity but not for an unknown product", () => {
    expect(checkTrainingProduct(products, "train.gpu", 1)?.retry).toBe(true);
    expect(checkTrainingProduct(products, "nope", 1)?.retry).toBeUndefined();
  });

  it("names the closest codes of a large catalog, how many others it has and how to list them", () => {
    const catalog: TrainingProduct[] = Array.from({ length: 200 }, (_, i) => ({
      name: `p${i}`,
      productCode: `train.gpu.a100.${i}`,
      aidcId: 1,
    }));
    const message = checkTrainingProduct(catalog, "train.gpu.a100.7x", 1)?.message ?? "";
    expect(message).toContain(
      "closest: train.gpu.a100.7, train.gpu.a100.70, train.gpu.a100.71, train.gpu.a100.72, train.gpu.a100.73 (and 195 more); list them with kubectl get trainingproducts",
    );
    expect(message).not.toContain("train.gpu.a100.199");
  });

  it("says so when the catalog lists no product", () => {
    expect(checkTrainingProduct([], "train.any", 1)?.message).toContain(
      "the catalog lists no product",
    );
  });
});
