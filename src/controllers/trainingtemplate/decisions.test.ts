import { describe, expect, it } from "vitest";
import type { NasVolume } from "../../crds/nasvolume.js";
import type { TrainingTemplate } from "../../crds/trainingtemplate.js";
import { formatOwnerMark, ownerMark } from "../managed/tenancy.js";
import {
  type AppliedRecord,
  bodyHash,
  needsUpdate,
  readApplied,
  templateDrift,
  templateInput,
  templateName,
} from "./decisions.js";

function template(spec: Partial<TrainingTemplate["spec"]>, name = "tpl"): TrainingTemplate {
  return {
    apiVersion: "aidc.io/v1alpha1",
    kind: "TrainingTemplate",
    metadata: { name, namespace: "ns" },
    spec: { deletionPolicy: "Orphan", ...spec },
  };
}

const readyNas = (storageId: string, storageType?: string): NasVolume => ({
  apiVersion: "aidc.io/v1alpha1",
  kind: "NasVolume",
  metadata: { name: "data" },
  spec: { productCode: "p", deletionPolicy: "Orphan" },
  status: { storageId, ...(storageType ? { storageType } : {}) },
});

describe("templateInput", () => {
  it("maps every spec field to the template body and names the template after the object", () => {
    const r = templateInput(
      template({
        description: "d",
        aidcId: 1,
        trainingType: "HPC",
        trainingFramework: "MPI",
        imageType: "private",
        image: "img",
        productCode: "p1",
        workerCount: 3,
        env: { A: "1" },
        enableAutoRetry: true,
        maxRetryCount: 2,
        enableTimeoutCancel: true,
        timeoutHours: 4,
        startCommand: "run",
        priority: 1,
      }),
      () => undefined,
    );
    expect(r).toEqual({
      ok: true,
      input: {
        name: "tpl",
        desc: "d",
        aidcId: 1,
        trainingType: "HPC",
        trainingFramework: "MPI",
        imageType: "private",
        image: "img",
        // The owner mark of TrainingTemplate ns/tpl rides in the env (managed/tenancy.ts).
        env: { A: "1", AIDC_OWNER: formatOwnerMark(ownerMark("ns", "tpl")) },
        resource: { productCode: "p1", workerCount: 3 },
        enableAutoRetry: true,
        maxRetryCount: 2,
        enableTimeoutCancel: true,
        timeoutHours: 4,
        startCommand: "run",
        priority: 1,
      },
    });
  });

  const cases: {
    reason: string;
    spec: Partial<TrainingTemplate["spec"]>;
    nas: NasVolume | undefined;
    want: unknown;
  }[] = [
    {
      reason: "a storage by id is sent read-only unless it says otherwise",
      spec: { storage: [{ storageId: "nas-1", readOnly: true }] },
      nas: undefined,
      want: [{ storageId: "nas-1", onlyRead: true }],
    },
    {
      reason: "a storage by NasVolume uses its storage id and type",
      spec: { storage: [{ nasVolumeRef: { name: "data" }, mountPath: "/d", readOnly: false }] },
      nas: readyNas("nas-9", "NAS"),
      want: [{ storageId: "nas-9", storageType: "NAS", mountPath: "/d", onlyRead: false }],
    },
    {
      reason: "a NasVolume without a storage id makes the body wait",
      spec: { storage: [{ nasVolumeRef: { name: "data" }, readOnly: true }] },
      nas: { ...readyNas("x"), status: {} },
      want: "NasVolumeNotReady",
    },
    {
      reason: "a missing NasVolume makes the body wait",
      spec: { storage: [{ nasVolumeRef: { name: "data" }, readOnly: true }] },
      nas: undefined,
      want: "NasVolumeNotReady",
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      const r = templateInput(template(c.spec), () => c.nas);
      expect(r.ok ? r.input.storageConfigs : r.reason).toEqual(c.want);
    });
  }

  it("uses spec.name over metadata.name", () => {
    expect(templateName(template({ name: "remote-name" }))).toBe("remote-name");
    expect(templateName(template({}, "obj"))).toBe("obj");
  });
});

describe("bodyHash", () => {
  it("is the same for the same body whatever the key order", () => {
    expect(bodyHash({ name: "a", image: "i", env: { X: "1", Y: "2" } })).toBe(
      bodyHash({ env: { Y: "2", X: "1" }, image: "i", name: "a" }),
    );
  });

  it("differs when any field differs", () => {
    expect(bodyHash({ name: "a", image: "i" })).not.toBe(bodyHash({ name: "a", image: "j" }));
  });
});

describe("needsUpdate", () => {
  const applied: AppliedRecord = { hash: "h1", at: "2026-01-01T00:00:00Z" };
  const cases: { reason: string; input: Parameters<typeof needsUpdate>[0]; want: boolean }[] = [
    {
      reason: "an unchanged body needs nothing",
      input: { fromJob: false, desiredHash: "h1", applied },
      want: false,
    },
    {
      reason: "a changed body is sent in full",
      input: { fromJob: false, desiredHash: "h2", applied },
      want: true,
    },
    {
      reason: "no record of the last body sends it (after a crash or an adoption)",
      input: { fromJob: false, desiredHash: "h1", applied: undefined },
      want: true,
    },
    {
      reason: "a body that cannot be built yet is waited for",
      input: { fromJob: false, desiredHash: undefined, applied },
      want: true,
    },
    {
      reason: "a template saved from a job is never updated",
      input: { fromJob: true, desiredHash: "h2", applied },
      want: false,
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      expect(needsUpdate(c.input)).toBe(c.want);
    });
  }
});

describe("readApplied", () => {
  const cases: { reason: string; raw: string | undefined; want: AppliedRecord | undefined }[] = [
    { reason: "no annotation is no record", raw: undefined, want: undefined },
    { reason: "text that is not JSON is no record", raw: "{", want: undefined },
    { reason: "a record without a time is no record", raw: '{"hash":"h"}', want: undefined },
    {
      reason: "a record is read with its source task",
      raw: '{"hash":"","at":"t","sourceTaskId":"task-1"}',
      want: { hash: "", at: "t", sourceTaskId: "task-1" },
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      expect(readApplied(c.raw)).toEqual(c.want);
    });
  }
});

describe("templateDrift", () => {
  const remote = { id: "t1", name: "a", image: "img:1", startCommand: "run", env: { A: "1" } };
  it("names the spec fields the listed template changed, comparing only what it carries", () => {
    expect(templateDrift({ name: "a", image: "img:1", env: { A: "1" } }, remote)).toEqual([]);
    expect(
      templateDrift({ name: "a", image: "img:2", desc: "d", env: { A: "2" } }, remote),
    ).toEqual(["image", "env"]);
    expect(templateDrift({ name: "a", startCommand: "other" }, remote)).toEqual(["startCommand"]);
    // Not carried by the record: no evidence, no drift.
    expect(templateDrift({ name: "a", priority: 1 }, remote)).toEqual([]);
  });
});
