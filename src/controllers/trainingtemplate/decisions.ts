/**
 * Pure decisions of the TrainingTemplate controller: the template body from the spec
 * (storages resolved through NasVolumes), the hash of the last applied body, and
 * whether the remote template must be updated.
 */

import { createHash } from "node:crypto";
import type { NasVolume } from "../../crds/nasvolume.js";
import type { ConditionReason } from "../../crds/reasons.js";
import type { TrainingTemplate as TrainingTemplateObject } from "../../crds/trainingtemplate.js";
import {
  type TrainingTemplateInput,
  toTemplateBody,
} from "../../service/kinds/trainingtemplate.js";
import {
  OWNER_MARK_ENV,
  stripClientTokenMarker,
  withOwnerMarker,
} from "../../service/schemas/create.js";
import type { StorageConfigItem } from "../../service/schemas/storage-config.js";
import type { TrainingTemplate } from "../../service/schemas/template.js";
import { formatOwnerMark, ownerMark } from "../managed/tenancy.js";
import { stalledNote } from "../referenced-state.js";

/** Annotation with the hash and time of the body last sent (create or full update). */
export const APPLIED_ANNOTATION = "aidc.io/applied-spec";

/** What {@link APPLIED_ANNOTATION} records. */
export interface AppliedRecord {
  /** sha256 of the canonical wire body. */
  hash: string;
  /** RFC 3339 time it was sent. */
  at: string;
  /** The task the template was saved from (fromTrainingJobRef). */
  sourceTaskId?: string;
}

/** Reads {@link APPLIED_ANNOTATION}; undefined when absent or malformed. */
export function readApplied(raw: string | undefined): AppliedRecord | undefined {
  if (!raw) return undefined;
  try {
    const v = JSON.parse(raw) as Partial<AppliedRecord>;
    if (typeof v.hash !== "string" || typeof v.at !== "string") return undefined;
    return typeof v.sourceTaskId === "string"
      ? { hash: v.hash, at: v.at, sourceTaskId: v.sourceTaskId }
      : { hash: v.hash, at: v.at };
  } catch {
    return undefined;
  }
}

/** The name of the template in the service: spec.name, else metadata.name. */
export function templateName(obj: TrainingTemplateObject): string {
  return obj.spec.name ?? obj.metadata.name ?? "";
}

/** A body, or why it cannot be built yet. */
export type BodyResult =
  | { ok: true; input: TrainingTemplateInput }
  | { ok: false; reason: ConditionReason; message: string };

/**
 * The full template body of the spec. A storage given by `nasVolumeRef` uses the
 * NasVolume's storage id, so the body waits until that NasVolume is bound.
 */
export function templateInput(
  obj: TrainingTemplateObject,
  nasVolume: (name: string) => NasVolume | undefined,
): BodyResult {
  const s = obj.spec;
  const storageConfigs: StorageConfigItem[] = [];
  for (const m of s.storage ?? []) {
    let storageId = m.storageId;
    let storageType = m.storageType;
    const ref = m.nasVolumeRef?.name;
    if (ref !== undefined) {
      const nas = nasVolume(ref);
      if (!nas?.status?.storageId) {
        return {
          ok: false,
          reason: "NasVolumeNotReady",
          message: `NasVolume ${ref} ${nas ? `has no storage id yet${stalledNote(nas)}` : "does not exist"}`,
        };
      }
      storageId = nas.status.storageId;
      storageType ??= nas.status.storageType;
    }
    const item: StorageConfigItem = { storageId: storageId ?? "", onlyRead: m.readOnly ?? true };
    if (storageType) item.storageType = storageType;
    if (m.fileDirectory !== undefined) item.fileDirectory = m.fileDirectory;
    if (m.mountPath !== undefined) item.mountPath = m.mountPath;
    storageConfigs.push(item);
  }
  const input: TrainingTemplateInput = { name: templateName(obj) };
  const copy = <K extends keyof TrainingTemplateInput>(k: K, v: TrainingTemplateInput[K]) => {
    if (v !== undefined) input[k] = v;
  };
  copy("desc", s.description);
  copy("aidcId", s.aidcId);
  copy("trainingType", s.trainingType);
  copy("trainingFramework", s.trainingFramework);
  copy("imageType", s.imageType);
  copy("image", s.image);
  // The owner mark travels in the env (and in desc as sent: withOwnerInDesc).
  const ns = obj.metadata.namespace ?? "";
  input.env = {
    ...(s.env ?? {}),
    [OWNER_MARK_ENV]: formatOwnerMark(ownerMark(ns, obj.metadata.name ?? "")),
  };
  if (s.productCode !== undefined || s.workerCount !== undefined) {
    input.resource = {
      ...(s.productCode !== undefined ? { productCode: s.productCode } : {}),
      ...(s.workerCount !== undefined ? { workerCount: s.workerCount } : {}),
    };
  }
  copy("enableAutoRetry", s.enableAutoRetry);
  if (storageConfigs.length > 0) input.storageConfigs = storageConfigs;
  copy("maxRetryCount", s.maxRetryCount);
  copy("enableTimeoutCancel", s.enableTimeoutCancel);
  copy("timeoutHours", s.timeoutHours);
  copy("startCommand", s.startCommand);
  copy("priority", s.priority);
  return { ok: true, input };
}

/**
 * The body as sent: `input` with the owner mark of its env also in `desc`, where a
 * template list that leaves env out still shows it. The body's hash is of `input`.
 */
export function withOwnerInDesc(input: TrainingTemplateInput): TrainingTemplateInput {
  const mark = input.env?.[OWNER_MARK_ENV];
  return mark ? { ...input, desc: withOwnerMarker(input.desc, mark) } : input;
}

/** JSON with object keys sorted, so equal bodies hash equally. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonical(x)}`).join(",")}}`;
  }
  return JSON.stringify(v);
}

/** The hash of the wire body of `input`. */
export function bodyHash(input: TrainingTemplateInput): string {
  return createHash("sha256")
    .update(canonical(toTemplateBody(input)))
    .digest("hex");
}

/**
 * Whether the remote template must be fully updated: a template saved from a job is
 * never updated (its configuration is the job's); otherwise when the body differs from
 * the one last applied, none is recorded, or the body cannot be built yet (undefined
 * hash: `update` then waits).
 */
export function needsUpdate(input: {
  fromJob: boolean;
  desiredHash: string | undefined;
  applied: AppliedRecord | undefined;
}): boolean {
  if (input.fromJob) return false;
  return input.desiredHash === undefined || input.applied?.hash !== input.desiredHash;
}

/** The scalar fields of a template body the service's record shows, by their spec names. */
const COMPARED = [
  ["desc", "description"],
  ["image", "image"],
  ["startCommand", "startCommand"],
  ["priority", "priority"],
  ["timeoutHours", "timeoutHours"],
  ["maxRetryCount", "maxRetryCount"],
  ["enableAutoRetry", "enableAutoRetry"],
  ["enableTimeoutCancel", "enableTimeoutCancel"],
] as const;

/**
 * The spec fields whose value in the remote template (as the template list shows it)
 * differs from the body the spec asks for: a change made outside the cluster. A field
 * the record does not carry proves nothing and is not compared.
 */
export function templateDrift(input: TrainingTemplateInput, remote: TrainingTemplate): string[] {
  const differs: string[] = [];
  for (const [wire, field] of COMPARED) {
    // A description is compared without markers: the owner's is added as it is sent.
    const [want, have] = [input[wire], remote[wire]].map((v) =>
      wire === "desc" && typeof v === "string" ? stripClientTokenMarker(v) : v,
    );
    if (want !== undefined && have !== undefined && want !== have) differs.push(field);
  }
  const env = remote.env;
  if (env && Object.entries(input.env ?? {}).some(([k, v]) => env[k] !== v)) differs.push("env");
  return differs;
}
