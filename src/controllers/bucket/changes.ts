/**
 * Applying a Bucket's feature changes to S3 (the update of external.ts): reading a
 * feature that the server may not implement, writing one change, checking the policy,
 * and the record of what was applied (status.lastApplied).
 */

import type { Bucket } from "../../crds/bucket.js";
import { noteNewest } from "../../runtime/newest-first.js";
import type { ObjectStorageClient } from "../../service/object-storage.js";
import {
  ObjectStorageAccessDeniedError,
  ObjectStorageNotImplementedError,
} from "../../service/object-storage-errors.js";
import type { ManagedCall } from "../managed/call.js";
import {
  canonicalPolicy,
  type desiredOf,
  FEATURE_TITLES,
  type Feature,
  type FeatureChange,
  type FeatureName,
  type Observed,
} from "./features.js";
import type { WriteLog } from "./writes.js";

/** What the last reconcile that changed a bucket applied (status.lastApplied). */
export interface AppliedRecord {
  time: string;
  changes: string[];
  drift: boolean;
}

/** Reads a feature, turning the server's NotImplemented into a marker. */
export async function feature<T>(read: () => Promise<T>): Promise<Feature<T>> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof ObjectStorageNotImplementedError) return { notImplemented: true };
    throw err;
  }
}

/**
 * Reads a feature `omitted` by the spec (read for the status alone) or stated: the
 * credentials refused the read of an omitted one, it is unread rather than a failure
 * (a key need not read what the Bucket leaves as it is).
 */
export async function observed<T>(read: () => Promise<T>, omitted: boolean): Promise<Observed<T>> {
  try {
    return await feature(read);
  } catch (err) {
    if (omitted && err instanceof ObjectStorageAccessDeniedError) return { unread: true };
    throw err;
  }
}

/** Why spec.policy cannot be a bucket policy, or undefined when it can be (or is unset). */
export function policyProblem(policy: string | undefined): string | undefined {
  if (policy === undefined || policy.trim() === "") return undefined;
  return canonicalPolicy(policy) === undefined
    ? "spec.policy is not a JSON object (S3 takes a bucket policy as a JSON document)"
    : undefined;
}

/** Writes one change of a feature to bucket `name`. */
export async function applyChange(
  s3: ObjectStorageClient,
  name: string,
  change: FeatureChange,
  desired: ReturnType<typeof desiredOf>,
): Promise<void> {
  switch (change.feature) {
    case "versioning":
      if (desired.versioning) await s3.putVersioning(name, desired.versioning);
      return;
    case "lifecycle":
      await s3.putLifecycle(name, desired.lifecycle ?? []);
      return;
    case "policy":
      await s3.putPolicy(name, desired.policy ?? undefined);
      return;
    case "tags":
      await s3.putTags(name, desired.tags);
      return;
    case "cors":
      await s3.putCors(name, desired.cors ?? []);
      return;
  }
}

/**
 * Applies `changes` to bucket `name` one by one, but the policy's when `skipPolicy`
 * (spec.policy is refused) and those `log` holds (writes.ts). A feature the server does
 * not implement (its read said so, its write answered NotImplemented now or earlier at
 * this generation) is listed by title in `unsupported`, one it did not keep in `notKept`;
 * `applied` has the summaries of the changes sent, `rechecked` those of them that look
 * again at a held write.
 */
export async function applyChanges(
  s3: ObjectStorageClient,
  name: string,
  changes: readonly FeatureChange[],
  desired: ReturnType<typeof desiredOf>,
  skipPolicy: boolean,
  log: WriteLog,
): Promise<{
  applied: string[];
  rechecked: string[];
  unsupported: string[];
  notKept: FeatureName[];
}> {
  const out = { applied: [] as string[], rechecked: [] as string[], unsupported: [] as string[] };
  const notKept: FeatureName[] = [];
  for (const change of changes) {
    if (change.feature === "policy" && skipPolicy) continue;
    const held = log.held(change.feature);
    if (change.notImplemented || held === "NotImplemented") {
      out.unsupported.push(FEATURE_TITLES[change.feature]);
      continue;
    }
    if (held === "NotKept") {
      notKept.push(change.feature);
      continue;
    }
    const rechecks = log.rechecks(change.feature);
    try {
      await applyChange(s3, name, change, desired);
      out.applied.push(change.summary);
      if (rechecks) out.rechecked.push(change.summary);
      log.wrote(change.feature, false);
    } catch (err) {
      if (!(err instanceof ObjectStorageNotImplementedError)) throw err;
      out.unsupported.push(FEATURE_TITLES[change.feature]);
      log.wrote(change.feature, true);
    }
  }
  return { ...out, notKept };
}

/** The most buckets whose up-to-date generation is remembered (the oldest forgotten first). */
export const UP_TO_DATE_MAX = 10_000;

/**
 * By uid, the generation at which this process last read each bucket as the spec says.
 * A change at that same generation puts back one made outside the cluster, even while
 * the cached status still lacks the write that recorded the generation.
 */
export class UpToDateGenerations {
  private readonly byUid = new Map<string, number>();

  note(obj: Bucket): void {
    noteNewest(this.byUid, obj.metadata.uid ?? "", obj.metadata.generation ?? 0, UP_TO_DATE_MAX);
  }

  /** Whether `obj`'s bucket was read as its spec says at the current generation. */
  at(obj: Bucket): boolean {
    return this.byUid.get(obj.metadata.uid ?? "") === (obj.metadata.generation ?? 0);
  }
}

/**
 * What was applied, for status.lastApplied; a change while the spec is the one last
 * reconciled (generation = observedGeneration, or read up to date by this process at
 * this generation) puts back a change made outside the cluster, and a Warning event says
 * so.
 */
export function recordApplied(
  call: ManagedCall<Bucket>,
  applied: string[],
  upToDate: UpToDateGenerations,
  rechecked: readonly string[] = [],
): AppliedRecord {
  const { obj } = call;
  // A held write sent again to look again (writes.ts) puts back nothing.
  const drifted = applied.filter((a) => !rechecked.includes(a));
  const drift =
    drifted.length > 0 &&
    (upToDate.at(obj) ||
      (obj.status?.observedGeneration !== undefined &&
        obj.status.observedGeneration === obj.metadata.generation &&
        obj.status.bucketName !== undefined));
  const record: AppliedRecord = {
    time: call
      .now()
      .toISOString()
      .replace(/\.\d{3}Z$/, "Z"),
    changes: applied,
    drift,
  };
  if (drift) {
    call.warning(
      "DriftCorrected",
      `changed outside the cluster, put back as the spec says: ${drifted.join(", ")}`,
    );
  }
  return record;
}
