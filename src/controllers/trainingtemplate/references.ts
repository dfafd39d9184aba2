/**
 * The TrainingTemplate kind's reference resolution (the generic loop's
 * `resolveReferences` step): `fromTrainingJobRef` to the job's task id (until the
 * template exists: a template saved from a job never changes), else each
 * `storage[].nasVolumeRef` to its NasVolume (once it has a storage id); and the storage
 * ids the namespace owns, for the raw-mount check. Pure over the cache reader.
 */
import { type NasVolume, nasVolumeCrd } from "../../crds/nasvolume.js";
import { type TrainingJob, trainingJobCrd } from "../../crds/trainingjob.js";
import type { TrainingTemplate as TrainingTemplateObject } from "../../crds/trainingtemplate.js";
import type { ReferenceReader, ReferenceResolution } from "../managed/call.js";
import { ownStorageIds } from "../nasvolume/own-storages.js";
import { stalledNote } from "../referenced-state.js";

/** What the template's client gets from the reference step (`call.refs`). */
export interface TemplateRefs {
  /** `fromTrainingJobRef`, before the template exists: the job's task id. */
  sourceTaskId?: string;
  /** The NasVolumes of `storage[].nasVolumeRef` by name, each with a storage id. */
  nasVolumes: ReadonlyMap<string, NasVolume>;
  /** The storage ids of the namespace's Ready NasVolumes (raw mounts are checked against them). */
  ownStorageIds: () => ReadonlySet<string | undefined>;
}

/** Resolves a template's references; see the module comment. */
export function resolveTemplateReferences(
  obj: TrainingTemplateObject,
  read: ReferenceReader,
): ReferenceResolution<TemplateRefs> {
  const own = ownStorageIds(read);
  const jobName = obj.spec.fromTrainingJobRef?.name;
  if (jobName) {
    if (read.bound) {
      return { resolved: true, refs: { nasVolumes: new Map(), ownStorageIds: own } };
    }
    const taskId = read.get<TrainingJob>(trainingJobCrd, jobName)?.status?.taskId;
    if (!taskId) {
      return {
        resolved: false,
        reason: "SourceJobNotReady",
        message: `TrainingJob ${jobName} has no task id yet`,
      };
    }
    return {
      resolved: true,
      refs: { sourceTaskId: taskId, nasVolumes: new Map(), ownStorageIds: own },
    };
  }
  const nasVolumes = new Map<string, NasVolume>();
  for (const m of obj.spec.storage ?? []) {
    const ref = m.nasVolumeRef?.name;
    if (ref === undefined) continue;
    const nas = read.get<NasVolume>(nasVolumeCrd, ref);
    if (!nas?.status?.storageId) {
      return {
        resolved: false,
        reason: "NasVolumeNotReady",
        message: `NasVolume ${ref} ${nas ? `has no storage id yet${stalledNote(nas)}` : "does not exist"}`,
      };
    }
    nasVolumes.set(ref, nas);
  }
  return { resolved: true, refs: { nasVolumes, ownStorageIds: own } };
}

/** The template indexes of the objects a template refers to (`namespace/name` each). */
export const TEMPLATE_REFERENCE_INDEX = {
  nasVolume: "byNasVolumeRef",
  trainingJob: "byFromTrainingJobRef",
} as const;

/** Index values of a template's NasVolume references. */
export function templateNasVolumeRefKeys(template: TrainingTemplateObject): string[] {
  const ns = template.metadata?.namespace ?? "";
  const names = (template.spec?.storage ?? []).flatMap((m) =>
    m.nasVolumeRef?.name !== undefined ? [m.nasVolumeRef.name] : [],
  );
  return [...new Set(names)].map((n) => `${ns}/${n}`);
}

/** Index value of the TrainingJob a template is saved from, if any. */
export function templateFromJobKeys(template: TrainingTemplateObject): string[] {
  const name = template.spec?.fromTrainingJobRef?.name;
  return name === undefined ? [] : [`${template.metadata?.namespace ?? ""}/${name}`];
}
