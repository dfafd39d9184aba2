import { describe, expect, it } from "vitest";
import type { Bucket } from "../../crds/bucket.js";
import type { TrainingJobSpec } from "../../crds/trainingjob.js";
import { MAX_START_COMMAND_CHARS } from "../../crds/trainingjob-status.js";
import type { NasVolumeObject, TrainingJobObject, TrainingTemplateObject } from "./objects.js";
import {
  copyFromKeys,
  createdConfig,
  nasVolumeRefKeys,
  type ReferenceLookup,
  resolveReferences,
  templateRefKeys,
} from "./references.js";

/** A TrainingJob in namespace ns with the given spec fields over a DIRECT default. */
function job(spec: Partial<TrainingJobSpec>, name = "tj"): TrainingJobObject {
  return {
    apiVersion: "aidc.io/v1alpha1",
    kind: "TrainingJob",
    metadata: { name, namespace: "ns", uid: "uid-1", generation: 1 },
    spec: {
      createType: "DIRECT",
      exposePorts: false,
      deletionPolicy: "Orphan",
      ...spec,
    },
  };
}

const ready = [
  {
    type: "Ready",
    status: "True" as const,
    reason: "Running",
    message: "",
    lastTransitionTime: "",
  },
];

function nas(name: string, storageId?: string, isReady = true): NasVolumeObject {
  return {
    apiVersion: "aidc.io/v1alpha1",
    kind: "NasVolume",
    metadata: { name, namespace: "ns" },
    spec: { productCode: "nas.capacity.standard", deletionPolicy: "Orphan" },
    status: {
      ...(storageId ? { storageId, storageType: "capacity" } : {}),
      ...(isReady ? { conditions: ready } : {}),
    },
  };
}

const template: TrainingTemplateObject = {
  apiVersion: "aidc.io/v1alpha1",
  kind: "TrainingTemplate",
  metadata: { name: "tpl", namespace: "ns" },
  spec: { image: "tpl:1", productCode: "train.cpu.16", workerCount: 2, deletionPolicy: "Orphan" },
  status: { templateId: "tpl-0001" },
};

function lookup(objects: {
  nas?: NasVolumeObject[];
  templates?: TrainingTemplateObject[];
  jobs?: TrainingJobObject[];
  buckets?: Bucket[];
}): ReferenceLookup {
  return {
    nasVolume: (n) => objects.nas?.find((o) => o.metadata.name === n),
    bucket: (n) => objects.buckets?.find((o) => o.metadata.name === n),
    template: (n) => objects.templates?.find((o) => o.metadata.name === n),
    trainingJob: (n) => objects.jobs?.find((o) => o.metadata.name === n),
  };
}

describe("resolveReferences", () => {
  const source = {
    ...job({ image: "src:1", productCode: "train.cpu.16", workerCount: 3 }, "src"),
    status: { taskId: "task-0001" },
  };
  const cases: {
    reason: string;
    job: TrainingJobObject;
    lookup: ReferenceLookup;
    want: {
      waitReason?: string;
      storageIds?: string[];
      templateId?: string;
      sourceTaskId?: string;
    };
  }[] = [
    {
      reason: "a storage id is used as given",
      job: job({ storage: [{ storageId: "nas-1", readOnly: true }] }),
      lookup: lookup({}),
      want: { storageIds: ["nas-1"] },
    },
    {
      reason: "a Ready NasVolume gives its storage id",
      job: job({ storage: [{ nasVolumeRef: { name: "data" }, readOnly: false }] }),
      lookup: lookup({ nas: [nas("data", "nas-9")] }),
      want: { storageIds: ["nas-9"] },
    },
    {
      reason: "a missing NasVolume is waited for",
      job: job({ storage: [{ nasVolumeRef: { name: "data" }, readOnly: true }] }),
      lookup: lookup({}),
      want: { waitReason: "NasVolumeNotFound" },
    },
    {
      reason: "a NasVolume that is not Ready is waited for",
      job: job({ storage: [{ nasVolumeRef: { name: "data" }, readOnly: true }] }),
      lookup: lookup({ nas: [nas("data", "nas-9", false)] }),
      want: { waitReason: "NasVolumeNotReady" },
    },
    {
      reason: "a Ready NasVolume without a storage id is waited for",
      job: job({ storage: [{ nasVolumeRef: { name: "data" }, readOnly: true }] }),
      lookup: lookup({ nas: [nas("data")] }),
      want: { waitReason: "NasVolumeNotReady" },
    },
    {
      reason: "a template with an id resolves",
      job: job({ createType: "TEMPLATE", templateRef: { name: "tpl" } }),
      lookup: lookup({ templates: [template] }),
      want: { templateId: "tpl-0001", storageIds: [] },
    },
    {
      reason: "a template without an id is waited for",
      job: job({ createType: "TEMPLATE", templateRef: { name: "tpl" } }),
      lookup: lookup({ templates: [{ ...template, status: {} }] }),
      want: { waitReason: "TemplateNotReady" },
    },
    {
      reason: "a missing template is waited for",
      job: job({ createType: "TEMPLATE", templateRef: { name: "tpl" } }),
      lookup: lookup({}),
      want: { waitReason: "TemplateNotFound" },
    },
    {
      reason: "a source job with a task resolves",
      job: job({ createType: "COPY", copyFrom: { name: "src" } }),
      lookup: lookup({ jobs: [source] }),
      want: { sourceTaskId: "task-0001", storageIds: [] },
    },
    {
      reason: "a source job without a task is waited for",
      job: job({ createType: "COPY", copyFrom: { name: "src" } }),
      lookup: lookup({ jobs: [{ ...source, status: {} }] }),
      want: { waitReason: "SourceJobNotReady" },
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      const r = resolveReferences(c.job, c.lookup);
      if (c.want.waitReason) {
        expect(r).toMatchObject({ resolved: false, reason: c.want.waitReason });
        return;
      }
      if (!r.resolved) throw new Error(`unexpectedly unresolved: ${r.message}`);
      expect(r.refs.storageConfigs.map((s) => s.storageId)).toEqual(c.want.storageIds);
      expect(r.refs.templateId).toBe(c.want.templateId);
      expect(r.refs.sourceTaskId).toBe(c.want.sourceTaskId);
    });
  }

  it("polls a wait for a NasVolume its template names, not one its own storage names", () => {
    const storage = [{ nasVolumeRef: { name: "data" }, readOnly: true }];
    const inherited = resolveReferences(
      job({ createType: "TEMPLATE", templateRef: { name: "tpl" } }),
      lookup({ templates: [{ ...template, spec: { ...template.spec, storage } }] }),
    );
    expect(inherited).toMatchObject({ resolved: false, reason: "NasVolumeNotFound", retry: true });
    const own = resolveReferences(job({ storage }), lookup({}));
    expect(own).toMatchObject({ resolved: false, reason: "NasVolumeNotFound", retry: false });
  });

  it("takes the storage type from the NasVolume and keeps the mount's own fields", () => {
    const r = resolveReferences(
      job({
        storage: [
          {
            nasVolumeRef: { name: "data" },
            readOnly: false,
            mountPath: "/data",
            fileDirectory: "/x",
          },
        ],
      }),
      lookup({ nas: [nas("data", "nas-9")] }),
    );
    expect(r.resolved && r.refs.storageConfigs).toEqual([
      {
        storageId: "nas-9",
        storageType: "capacity",
        onlyRead: false,
        mountPath: "/data",
        fileDirectory: "/x",
      },
    ]);
  });

  it("inherits, from a template saved from a TrainingJob, what that job was created with", () => {
    const saved: TrainingTemplateObject = {
      ...template,
      metadata: { name: "saved", namespace: "ns" },
      spec: { fromTrainingJobRef: { name: "src" }, deletionPolicy: "Orphan" },
    };
    const src = job(
      { createType: "TEMPLATE", templateRef: { name: "tpl" }, workerCount: 4 },
      "src",
    );
    const r = resolveReferences(
      job({ createType: "TEMPLATE", templateRef: { name: "saved" } }),
      lookup({ templates: [template, saved], jobs: [src] }),
    );
    expect(r.resolved && r.refs.inherited).toEqual({
      image: "tpl:1",
      productCode: "train.cpu.16",
      workerCount: 4,
    });
    const gone = resolveReferences(
      job({ createType: "TEMPLATE", templateRef: { name: "saved" } }),
      lookup({ templates: [saved] }),
    );
    expect(gone.resolved && gone.refs.inherited).toEqual({});
  });

  it("inherits, once the saved template's job is gone, what the service stores, but a cut start command", () => {
    const stored = {
      image: "saved:1",
      productCode: "train.gpu.a100",
      workerCount: 2,
      priority: 1,
      envKeys: ["A"],
    };
    const saved = (startCommand: string): TrainingTemplateObject => ({
      ...template,
      metadata: { name: "saved", namespace: "ns" },
      spec: { fromTrainingJobRef: { name: "src" }, deletionPolicy: "Orphan" },
      status: { ...template.status, config: { ...stored, startCommand } },
    });
    const inherited = (startCommand: string) => {
      const r = resolveReferences(
        job({ createType: "TEMPLATE", templateRef: { name: "saved" } }),
        lookup({ templates: [saved(startCommand)] }),
      );
      return r.resolved ? r.refs.inherited : undefined;
    };
    const { envKeys: _, ...fields } = stored;
    expect(inherited("python train.py")).toEqual({ ...fields, startCommand: "python train.py" });
    expect(inherited(`${"x".repeat(MAX_START_COMMAND_CHARS - 1)}…`)).toEqual(fields);
  });

  it("inherits the template's configuration", () => {
    const r = resolveReferences(
      job({ createType: "TEMPLATE", templateRef: { name: "tpl" } }),
      lookup({ templates: [template] }),
    );
    expect(r.resolved && r.refs.inherited).toEqual({
      image: "tpl:1",
      productCode: "train.cpu.16",
      workerCount: 2,
    });
  });
});

describe("createdConfig (what a COPY job inherits from its source)", () => {
  const tpl1: TrainingTemplateObject = {
    ...template,
    spec: { ...template.spec, priority: 1, startCommand: "run" },
  };
  const fromTpl = job({ createType: "TEMPLATE", templateRef: { name: "tpl" } }, "from-tpl");
  const copyOfTpl = job({ createType: "COPY", copyFrom: { name: "from-tpl" } }, "copy-1");
  const cases: {
    reason: string;
    job: TrainingJobObject;
    lookup: ReferenceLookup;
    want: Record<string, unknown>;
  }[] = [
    {
      reason: "a DIRECT source gives its own spec, without a priority it did not set",
      job: job({ image: "a:1", productCode: "p", workerCount: 1 }),
      lookup: lookup({}),
      want: { image: "a:1", productCode: "p", workerCount: 1 },
    },
    {
      reason: "a TEMPLATE source gives its spec over its template's, priority 1 included",
      job: { ...fromTpl, spec: { ...fromTpl.spec, workerCount: 4 } },
      lookup: lookup({ templates: [tpl1] }),
      want: {
        image: "tpl:1",
        productCode: "train.cpu.16",
        workerCount: 4,
        priority: 1,
        startCommand: "run",
      },
    },
    {
      reason: "a copy of a copy of a TEMPLATE job follows the chain to the template",
      job: job({ createType: "COPY", copyFrom: { name: "copy-1" }, image: "c:2" }, "copy-2"),
      lookup: lookup({ templates: [tpl1], jobs: [fromTpl, copyOfTpl] }),
      want: {
        image: "c:2",
        productCode: "train.cpu.16",
        workerCount: 2,
        priority: 1,
        startCommand: "run",
      },
    },
    {
      reason: "a source whose template is gone gives only its own spec",
      job: { ...fromTpl, spec: { ...fromTpl.spec, image: "own:1" } },
      lookup: lookup({}),
      want: { image: "own:1" },
    },
    {
      reason: "a cycle of copies ends instead of looping",
      job: job({ createType: "COPY", copyFrom: { name: "b" }, image: "a:1" }, "a"),
      lookup: lookup({
        jobs: [
          job({ createType: "COPY", copyFrom: { name: "a" }, workerCount: 2 }, "b"),
          job({ createType: "COPY", copyFrom: { name: "b" }, image: "a:1" }, "a"),
        ],
      }),
      want: { image: "a:1", workerCount: 2 },
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      expect(createdConfig(c.job, c.lookup)).toEqual(c.want);
    });
  }

  it("gives a COPY job the priority its TEMPLATE source runs at", () => {
    const r = resolveReferences(
      job({ createType: "COPY", copyFrom: { name: "from-tpl" } }),
      lookup({ templates: [tpl1], jobs: [{ ...fromTpl, status: { taskId: "task-0002" } }] }),
    );
    expect(r.resolved && r.refs.inherited.priority).toBe(1);
  });
});

describe("a wait for a referenced object that is stalled", () => {
  const stalled = {
    type: "Stalled",
    status: "True" as const,
    reason: "ProductNotFoundRefused",
    message: "Ready is False: NAS product nas.x is not offered",
    lastTransitionTime: "",
  };
  it("says so in the message, with the referenced object's reason and message", () => {
    const refused = nas("data", undefined, false);
    refused.status = { conditions: [stalled] };
    const r = resolveReferences(
      job({ storage: [{ nasVolumeRef: { name: "data" }, readOnly: true }] }),
      lookup({ nas: [refused] }),
    );
    expect(r).toMatchObject({
      resolved: false,
      reason: "NasVolumeNotReady",
      message:
        "NasVolume data is not Ready yet: it is stalled (ProductNotFoundRefused: Ready is False: NAS product nas.x is not offered)",
    });
  });

  it("says nothing more of one still on its way", () => {
    const r = resolveReferences(
      job({ createType: "TEMPLATE", templateRef: { name: "tpl" } }),
      lookup({ templates: [{ ...template, status: {} }] }),
    );
    expect(r).toMatchObject({ message: "TrainingTemplate tpl has no template id yet" });
  });
});

describe("reference index values", () => {
  it("lists each referenced object once as namespace/name", () => {
    const j = job({
      storage: [
        { nasVolumeRef: { name: "a" }, readOnly: true },
        { nasVolumeRef: { name: "a" }, readOnly: true, mountPath: "/b" },
        { storageId: "x", readOnly: true },
      ],
    });
    expect(nasVolumeRefKeys(j)).toEqual(["ns/a"]);
    expect(templateRefKeys(job({ createType: "TEMPLATE", templateRef: { name: "t" } }))).toEqual([
      "ns/t",
    ]);
    expect(copyFromKeys(job({ createType: "COPY", copyFrom: { name: "s" } }))).toEqual(["ns/s"]);
    expect(templateRefKeys(j)).toEqual([]);
  });
});

describe("bucketEnv", () => {
  const bucket = (ready: boolean): Bucket => ({
    apiVersion: "aidc.io/v1alpha1",
    kind: "Bucket",
    metadata: { name: "ckpt", namespace: "ns" },
    spec: { adopt: false, forceDestroy: false, deletionPolicy: "Orphan" },
    status: {
      conditions: [
        {
          type: "Ready",
          status: ready ? "True" : "False",
          reason: ready ? "Available" : "Creating",
          message: "",
          lastTransitionTime: "2026-01-01T00:00:00Z",
        },
      ],
      ...(ready ? { bucketName: "ckpt-1", endpoint: "http://s3/ckpt-1", region: "us-east-1" } : {}),
    },
  });
  const withBuckets = job({ bucketEnv: [{ bucketRef: { name: "ckpt" }, prefix: "CKPT" }] });

  it("waits for a Bucket that does not exist, then for one that is not Ready", () => {
    expect(resolveReferences(withBuckets, lookup({}))).toMatchObject({
      resolved: false,
      reason: "BucketNotFound",
    });
    expect(resolveReferences(withBuckets, lookup({ buckets: [bucket(false)] }))).toMatchObject({
      resolved: false,
      reason: "BucketNotReady",
    });
  });

  it("gives the task the Bucket's name, endpoint and region under the prefix", () => {
    const r = resolveReferences(withBuckets, lookup({ buckets: [bucket(true)] }));
    expect(r).toMatchObject({
      resolved: true,
      refs: {
        bucketEnv: {
          CKPT_NAME: "ckpt-1",
          CKPT_ENDPOINT: "http://s3/ckpt-1",
          CKPT_REGION: "us-east-1",
        },
      },
    });
  });
});
