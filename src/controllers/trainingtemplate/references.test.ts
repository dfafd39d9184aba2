import { describe, expect, it } from "vitest";
import type { ReferenceReader } from "../managed/call.js";
import {
  resolveTemplateReferences,
  templateFromJobKeys,
  templateNasVolumeRefKeys,
} from "./references.js";

/** A reader over objects by plural and name. */
function reader(objects: Record<string, Record<string, unknown>>, bound = false): ReferenceReader {
  return {
    bound,
    get: <O>(res: { plural: string }, name: string) => objects[res.plural]?.[name] as O | undefined,
    list: <O>(res: { plural: string }) => Object.values(objects[res.plural] ?? {}) as O[],
  };
}

const template = (spec: object) => ({ metadata: { name: "t", namespace: "ns" }, spec }) as never;

const readyNas = {
  status: {
    storageId: "s-1",
    conditions: [{ type: "Ready", status: "True", reason: "Available", message: "" }],
  },
};

describe("resolveTemplateReferences", () => {
  const cases: {
    reason: string;
    spec: object;
    /** The template is bound to a remote template (an id recorded). */
    bound?: boolean;
    objects: Record<string, Record<string, unknown>>;
    want: string;
  }[] = [
    {
      reason: "a NasVolume without a storage id is a wait",
      spec: { storage: [{ nasVolumeRef: { name: "data" } }] },
      objects: { nasvolumes: { data: { status: {} } } },
      want: "NasVolumeNotReady",
    },
    {
      reason: "a missing NasVolume is a wait",
      spec: { storage: [{ nasVolumeRef: { name: "data" } }] },
      objects: {},
      want: "NasVolumeNotReady",
    },
    {
      reason: "a source job without a task id is a wait",
      spec: { fromTrainingJobRef: { name: "j" } },
      objects: { trainingjobs: { j: { status: {} } } },
      want: "SourceJobNotReady",
    },
    {
      reason: "a bound template saved from a job no longer needs the job",
      spec: { fromTrainingJobRef: { name: "j" } },
      bound: true,
      objects: {},
      want: "resolved",
    },
    {
      reason: "a NasVolume with a storage id resolves",
      spec: { storage: [{ nasVolumeRef: { name: "data" } }] },
      objects: { nasvolumes: { data: readyNas } },
      want: "resolved",
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      const r = resolveTemplateReferences(template(c.spec), reader(c.objects, c.bound));
      expect(r.resolved ? "resolved" : r.reason).toBe(c.want);
    });
  }

  it("hands the source task id, the NasVolumes and the namespace's own storages to the client", () => {
    const fromJob = resolveTemplateReferences(
      template({ fromTrainingJobRef: { name: "j" } }),
      reader({ trainingjobs: { j: { status: { taskId: "task-9" } } } }),
    );
    expect(fromJob.resolved && fromJob.refs.sourceTaskId).toBe("task-9");
    const withNas = resolveTemplateReferences(
      template({ storage: [{ nasVolumeRef: { name: "data" } }] }),
      reader({ nasvolumes: { data: readyNas } }),
    );
    expect(withNas.resolved && withNas.refs.nasVolumes.get("data")?.status?.storageId).toBe("s-1");
    expect(withNas.resolved && [...withNas.refs.ownStorageIds()]).toEqual(["s-1"]);
  });

  it("lists the namespace's NasVolumes for its own storages only when asked, once", () => {
    const read = reader({ nasvolumes: { data: readyNas } });
    let lists = 0;
    const counting: ReferenceReader = {
      ...read,
      list: <O>(res: { plural: string }) => {
        lists++;
        return read.list<O>(res as never);
      },
    };
    const r = resolveTemplateReferences(
      template({ storage: [{ nasVolumeRef: { name: "data" } }] }),
      counting,
    );
    expect(lists).toBe(0);
    expect(r.resolved && [...r.refs.ownStorageIds()]).toEqual(["s-1"]);
    expect(r.resolved && [...r.refs.ownStorageIds()]).toEqual(["s-1"]);
    expect(lists).toBe(1);
  });
});

describe("the template indexes of what a template refers to", () => {
  it("list each NasVolume a storage names once, as namespace/name", () => {
    const t = template({
      storage: [
        { nasVolumeRef: { name: "a" } },
        { storageId: "s-9" },
        { nasVolumeRef: { name: "a" } },
        { nasVolumeRef: { name: "b" } },
      ],
    });
    expect(templateNasVolumeRefKeys(t)).toEqual(["ns/a", "ns/b"]);
    expect(templateNasVolumeRefKeys(template({}))).toEqual([]);
  });

  it("list the TrainingJob a template is saved from, if it names one", () => {
    expect(templateFromJobKeys(template({ fromTrainingJobRef: { name: "job" } }))).toEqual([
      "ns/job",
    ]);
    expect(templateFromJobKeys(template({}))).toEqual([]);
  });
});
