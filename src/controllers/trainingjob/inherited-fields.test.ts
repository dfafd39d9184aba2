import { describe, expect, it } from "vitest";
import { structuralSchema } from "../../crds/manifest.js";
import { TrainingJobSpec } from "../../crds/trainingjob.js";
import { TrainingTemplateSpec } from "../../crds/trainingtemplate.js";
import {
  effectiveConfig,
  INHERITED_FIELDS,
  type InheritedConfig,
  pickInherited,
} from "./inherited-fields.js";

describe("effectiveConfig", () => {
  const cases: {
    reason: string;
    spec: Partial<InheritedConfig>;
    inherited: Partial<InheritedConfig>;
    want: Partial<InheritedConfig>;
  }[] = [
    {
      reason: "a DIRECT job that sets no priority gets the service's default 3",
      spec: { image: "a:1" },
      inherited: {},
      want: { image: "a:1", priority: 3 },
    },
    {
      reason: "a job that sets no priority takes the template's or source's",
      spec: {},
      inherited: { priority: 1 },
      want: { priority: 1 },
    },
    {
      reason: "the job's own priority wins over the template's",
      spec: { priority: 2 },
      inherited: { priority: 1 },
      want: { priority: 2 },
    },
    {
      reason: "the job's own priority 3 wins over the template's 1 (3 is not 'unset')",
      spec: { priority: 3 },
      inherited: { priority: 1 },
      want: { priority: 3 },
    },
    {
      reason: "each field the job omits is inherited on its own",
      spec: { image: "job:1", enableAutoRetry: false },
      inherited: {
        image: "tpl:1",
        productCode: "train.cpu.16",
        enableAutoRetry: true,
        maxRetryCount: 2,
      },
      want: {
        image: "job:1",
        productCode: "train.cpu.16",
        enableAutoRetry: false,
        maxRetryCount: 2,
        priority: 3,
      },
    },
    {
      reason: "a false or a list the job sets is its value, not a gap",
      spec: { enableTimeoutCancel: false, storage: [] },
      inherited: {
        enableTimeoutCancel: true,
        storage: [{ storageId: "nas-1", readOnly: true }],
      },
      want: { enableTimeoutCancel: false, storage: [], priority: 3 },
    },
    {
      reason: "a map is taken whole from one side, never merged",
      spec: { env: { A: "1" } },
      inherited: { env: { B: "2" } },
      want: { env: { A: "1" }, priority: 3 },
    },
    {
      reason: "a field absent on both sides stays absent (only priority has a default)",
      spec: {},
      inherited: {},
      want: { priority: 3 },
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      expect(effectiveConfig(c.spec, c.inherited)).toEqual(c.want);
    });
  }
});

describe("pickInherited", () => {
  it("keeps the inherited fields a spec sets and drops the job's own ones", () => {
    expect(
      pickInherited({
        image: "a:1",
        priority: 2,
        workerCount: undefined,
        ...{ createType: "DIRECT", taskName: "t", ports: [], exposePorts: true },
      } as Partial<InheritedConfig>),
    ).toEqual({ image: "a:1", priority: 2 });
  });
});

describe("INHERITED_FIELDS", () => {
  const jobProps = structuralSchema(TrainingJobSpec).properties as Record<string, object>;
  const templateProps = structuralSchema(TrainingTemplateSpec).properties as Record<string, object>;

  it("are fields of both the TrainingJob and the TrainingTemplate", () => {
    for (const f of INHERITED_FIELDS) {
      expect(jobProps, f).toHaveProperty(f);
      expect(templateProps, f).toHaveProperty(f);
    }
  });

  // A CRD default is stored in the spec, so the field would never be inherited (the
  // old `priority: default 3` made every TEMPLATE job run at 3).
  it("have no CRD default on either kind", () => {
    for (const f of INHERITED_FIELDS) {
      expect(jobProps[f], `TrainingJob ${f}`).not.toHaveProperty("default");
      expect(templateProps[f], `TrainingTemplate ${f}`).not.toHaveProperty("default");
    }
  });

  it("are left unset by the API server's defaulting of an empty TEMPLATE job", () => {
    const defaulted = TrainingJobSpec.parse({
      createType: "TEMPLATE",
      templateRef: { name: "tpl" },
    }) as Record<string, unknown>;
    for (const f of INHERITED_FIELDS) expect(defaulted, f).not.toHaveProperty(f);
  });
});
