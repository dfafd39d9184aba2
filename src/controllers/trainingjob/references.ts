/**
 * Resolving a TrainingJob's references before its task is created: each
 * `storage[].nasVolumeRef` to the NasVolume's storage id (once the NasVolume is
 * Ready), `templateRef` to the TrainingTemplate's template id and configuration
 * (createType TEMPLATE), `copyFrom` to the other TrainingJob's task id and spec (COPY),
 * each `bucketEnv[].bucketRef` to the Bucket's name, endpoint and region (once Ready).
 * Pure: the caller passes a lookup over the informer cache. It is the kind's
 * `resolveReferences` step of the generic loop ({@link resolveJobReferences}).
 */
import { type Bucket, bucketCrd } from "../../crds/bucket.js";
import { nasVolumeCrd } from "../../crds/nasvolume.js";
import type { ConditionReason } from "../../crds/reasons.js";
import type { StorageMount } from "../../crds/training.js";
import { TRAINING_JOB_REASONS, trainingJobCrd } from "../../crds/trainingjob.js";
import { MAX_START_COMMAND_CHARS } from "../../crds/trainingjob-status.js";
import { trainingTemplateCrd } from "../../crds/trainingtemplate.js";
import { CUT_MARK, isConditionTrue } from "../../runtime/object-writes.js";
import type { StorageConfigItem } from "../../service/index.js";
import type { ReferenceReader, ReferenceResolution } from "../managed/call.js";
import { ownStorageIds } from "../nasvolume/own-storages.js";
import { stalledNote } from "../referenced-state.js";
import {
  effectiveConfig,
  type InheritedConfig,
  overlayInherited,
  pickInherited,
} from "./inherited-fields.js";
import type { NasVolumeObject, TrainingJobObject, TrainingTemplateObject } from "./objects.js";

const R = TRAINING_JOB_REASONS.names;

/** Reads referenced objects of the job's namespace (from the cache). */
export interface ReferenceLookup {
  nasVolume(name: string): NasVolumeObject | undefined;
  bucket(name: string): Bucket | undefined;
  template(name: string): TrainingTemplateObject | undefined;
  trainingJob(name: string): TrainingJobObject | undefined;
}

/** Everything the create request needs from other objects. */
export interface ResolvedReferences {
  /** The storage mounts with storage ids (the job's own, else the source's). */
  storageConfigs: StorageConfigItem[];
  /** The environment variables of `spec.bucketEnv` (name, endpoint and region of each Bucket). */
  bucketEnv?: Record<string, string>;
  /** createType TEMPLATE: the template's id. */
  templateId?: string;
  /** createType COPY: the task to copy. */
  sourceTaskId?: string;
  /**
   * Configuration of the template (TEMPLATE) or of the source job as it was created
   * (COPY: its spec over its own template's or source's), used where the job's spec is
   * silent; see {@link effectiveConfig}.
   */
  inherited: Partial<InheritedConfig>;
}

/** The result of resolution: everything, or why the job must wait. */
export type ResolutionResult =
  | { resolved: true; refs: ResolvedReferences }
  | { resolved: false; reason: ConditionReason; message: string; retry?: boolean };

const wait = (reason: ConditionReason, message: string, retry = false): ResolutionResult => ({
  resolved: false,
  reason,
  message,
  retry,
});

/** Resolves one storage mount; a string is the reason to wait. */
function storageConfig(
  mount: StorageMount,
  lookup: ReferenceLookup,
): StorageConfigItem | { reason: ConditionReason; message: string } {
  let storageId = mount.storageId;
  let storageType = mount.storageType;
  const ref = mount.nasVolumeRef?.name;
  if (ref !== undefined) {
    const nas = lookup.nasVolume(ref);
    if (!nas) return { reason: R.NasVolumeNotFound, message: `NasVolume ${ref} does not exist` };
    if (!isConditionTrue(nas.status?.conditions, "Ready") || !nas.status?.storageId) {
      return {
        reason: "NasVolumeNotReady",
        message: `NasVolume ${ref} is not Ready yet${stalledNote(nas)}`,
      };
    }
    storageId = nas.status.storageId;
    storageType ??= nas.status.storageType;
  }
  const item: StorageConfigItem = { storageId: storageId ?? "", onlyRead: mount.readOnly ?? true };
  if (storageType) item.storageType = storageType;
  if (mount.fileDirectory !== undefined) item.fileDirectory = mount.fileDirectory;
  if (mount.mountPath !== undefined) item.mountPath = mount.mountPath;
  return item;
}

/** How many COPY links {@link createdConfig} follows (copies of copies of ...). */
const MAX_COPY_CHAIN = 8;

/**
 * The configuration a job's task was created with, as far as the cache tells: its own
 * spec over its template's (TEMPLATE) or, recursively, its source job's (COPY). So a
 * copy of a TEMPLATE job that left priority to its template runs at the template's
 * priority, not at 3. A referenced object that is gone contributes nothing.
 */
export function createdConfig(
  job: TrainingJobObject,
  lookup: ReferenceLookup,
  seen: ReadonlySet<string> = new Set(),
): Partial<InheritedConfig> {
  const own = pickInherited(job.spec);
  const name = job.metadata?.name ?? "";
  if (seen.has(name) || seen.size >= MAX_COPY_CHAIN) return own;
  const spec = job.spec;
  if (spec.createType === "TEMPLATE" && spec.templateRef) {
    const tpl = lookup.template(spec.templateRef.name);
    return tpl ? overlayInherited(own, templateConfig(tpl, lookup, new Set([...seen, name]))) : own;
  }
  if (spec.createType === "COPY" && spec.copyFrom) {
    const source = lookup.trainingJob(spec.copyFrom.name);
    if (!source) return own;
    return overlayInherited(own, createdConfig(source, lookup, new Set([...seen, name])));
  }
  return own;
}

/**
 * The configuration a template gives a TEMPLATE job: its spec's fields or, for one saved
 * from a TrainingJob (`fromTrainingJobRef`, whose spec holds none), what that job was
 * created with; once that job is gone, what the service stores (`status.config`), but a
 * start command cut short there.
 */
function templateConfig(
  tpl: TrainingTemplateObject,
  lookup: ReferenceLookup,
  seen: ReadonlySet<string>,
): Partial<InheritedConfig> {
  const from = tpl.spec.fromTrainingJobRef?.name;
  if (from === undefined) return pickInherited(tpl.spec);
  const job = lookup.trainingJob(from);
  if (job) return createdConfig(job, lookup, seen);
  const { startCommand, ...stored } = tpl.status?.config ?? {};
  const cut =
    startCommand?.endsWith(CUT_MARK) && startCommand.length >= MAX_START_COMMAND_CHARS - 1;
  return pickInherited({ ...stored, ...(cut ? {} : { startCommand }) });
}

/**
 * Resolves the job's references. A missing or not-ready referenced object is a reason
 * to wait (ReferencesResolved=False); the job is reconciled again when it changes.
 * Fields the spec omits are taken from the template (TEMPLATE) or the configuration the
 * source job was created with (COPY, {@link createdConfig}); the storage list too, when
 * the job has none. The fields are those of `INHERITED_FIELDS`.
 */
export function resolveReferences(
  job: TrainingJobObject,
  lookup: ReferenceLookup,
): ResolutionResult {
  const spec = job.spec;
  let inherited: Partial<InheritedConfig> = {};
  const refs: Omit<ResolvedReferences, "storageConfigs" | "inherited" | "bucketEnv"> = {};
  if (spec.createType === "TEMPLATE") {
    const name = spec.templateRef?.name;
    if (!name)
      return wait(R.TemplateRefMissingInvalidSpec, "createType TEMPLATE needs templateRef");
    const tpl = lookup.template(name);
    if (!tpl) return wait(R.TemplateNotFound, `TrainingTemplate ${name} does not exist`);
    if (!tpl.status?.templateId) {
      return wait(
        R.TemplateNotReady,
        `TrainingTemplate ${name} has no template id yet${stalledNote(tpl)}`,
      );
    }
    refs.templateId = tpl.status.templateId;
    inherited = templateConfig(tpl, lookup, new Set([job.metadata?.name ?? ""]));
  }
  if (spec.createType === "COPY") {
    const name = spec.copyFrom?.name;
    if (!name) return wait(R.CopyFromMissingInvalidSpec, "createType COPY needs copyFrom");
    const source = lookup.trainingJob(name);
    if (!source) return wait(R.SourceJobNotFound, `TrainingJob ${name} does not exist`);
    if (!source.status?.taskId) {
      return wait(
        "SourceJobNotReady",
        `TrainingJob ${name} has no task id yet${stalledNote(source)}`,
      );
    }
    refs.sourceTaskId = source.status.taskId;
    inherited = createdConfig(source, lookup);
  }
  const mounts = effectiveConfig(spec, inherited).storage ?? [];
  const storageConfigs: StorageConfigItem[] = [];
  for (const m of mounts) {
    const item = storageConfig(m, lookup);
    // The NasVolume watch wakes jobs naming it, not those of a template or source naming it.
    if ("reason" in item) return wait(item.reason, item.message, !spec.storage);
    storageConfigs.push(item);
  }
  const buckets = bucketEnvOf(job, lookup);
  if (!buckets.ok) return wait(buckets.reason, buckets.message);
  return { resolved: true, refs: { ...refs, storageConfigs, inherited, bucketEnv: buckets.env } };
}

/** The variables of `spec.bucketEnv`, or why the job must wait for a Bucket. */
function bucketEnvOf(
  job: TrainingJobObject,
  lookup: ReferenceLookup,
):
  | { ok: true; env: Record<string, string> }
  | { ok: false; reason: ConditionReason; message: string } {
  const env: Record<string, string> = {};
  for (const entry of job.spec.bucketEnv ?? []) {
    const name = entry.bucketRef.name;
    const bucket = lookup.bucket(name);
    if (!bucket)
      return { ok: false, reason: R.BucketNotFound, message: `Bucket ${name} does not exist` };
    const status = bucket.status;
    if (!isConditionTrue(status?.conditions, "Ready") || !status?.bucketName || !status.endpoint) {
      return {
        ok: false,
        reason: R.BucketNotReady,
        message: `Bucket ${name} is not Ready yet${stalledNote(bucket)}`,
      };
    }
    const prefix = entry.prefix ?? "BUCKET";
    env[`${prefix}_NAME`] = status.bucketName;
    env[`${prefix}_ENDPOINT`] = status.endpoint;
    if (status.region) env[`${prefix}_REGION`] = status.region;
  }
  return { ok: true, env };
}

/** What the TrainingJob's client gets from the reference step (`call.refs`). */
export interface TrainingJobRefs extends ResolvedReferences {
  /**
   * The storage ids of the namespace's Ready NasVolumes: a raw `storageId` mount of
   * any other storage needs adoption rights (managed/tenancy.ts).
   */
  ownStorageIds: () => ReadonlySet<string | undefined>;
}

/** A {@link ReferenceLookup} over a reader of the job's namespace. */
export function lookupIn(read: ReferenceReader): ReferenceLookup {
  return {
    nasVolume: (name) => read.get(nasVolumeCrd, name),
    bucket: (name) => read.get(bucketCrd, name),
    template: (name) => read.get(trainingTemplateCrd, name),
    trainingJob: (name) => read.get(trainingJobCrd, name),
  };
}

/** The TrainingJob kind's `resolveReferences` step: {@link resolveReferences} over the cache. */
export function resolveJobReferences(
  job: TrainingJobObject,
  read: ReferenceReader,
): ReferenceResolution<TrainingJobRefs> {
  const r = resolveReferences(job, lookupIn(read));
  if (!r.resolved) return r;
  return { resolved: true, refs: { ...r.refs, ownStorageIds: ownStorageIds(read) } };
}

/** Index name: TrainingJobs by the `namespace/name` of each object they refer to. */
export const REFERENCE_INDEX = {
  nasVolume: "byNasVolumeRef",
  bucket: "byBucketRef",
  template: "byTemplateRef",
  trainingJob: "byCopyFrom",
} as const;

/** Index values of a job's NasVolume references (`namespace/name`). */
export function nasVolumeRefKeys(job: TrainingJobObject): string[] {
  const ns = job.metadata?.namespace ?? "";
  const names = (job.spec?.storage ?? []).flatMap((m) =>
    m.nasVolumeRef ? [m.nasVolumeRef.name] : [],
  );
  return [...new Set(names)].map((n) => `${ns}/${n}`);
}

/** Index values of a job's Bucket references (`namespace/name`). */
export function bucketRefKeys(job: TrainingJobObject): string[] {
  const ns = job.metadata?.namespace ?? "";
  const names = (job.spec?.bucketEnv ?? []).map((e) => e.bucketRef.name);
  return [...new Set(names)].map((n) => `${ns}/${n}`);
}

/** Index values of a job's template reference. */
export function templateRefKeys(job: TrainingJobObject): string[] {
  const name = job.spec?.templateRef?.name;
  return name ? [`${job.metadata?.namespace ?? ""}/${name}`] : [];
}

/** Index values of a job's copyFrom reference. */
export function copyFromKeys(job: TrainingJobObject): string[] {
  const name = job.spec?.copyFrom?.name;
  return name ? [`${job.metadata?.namespace ?? ""}/${name}`] : [];
}
