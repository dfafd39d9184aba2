/**
 * The Bucket's step before the delete of a Delete-policy deletion (external.ts
 * beforeDelete): a bucket the account does not list, or made outside since under its
 * name, is another's and left alone (ownership.ts notTheRecorded), once the list could
 * show a bucket just made (its object under a minute old is waited on); one deleted outside
 * already has nothing to empty (the delete and the read after it find it gone); else it
 * is emptied under spec.forceDestroy (versions object lock keeps are waited on, never
 * bypassed: BucketObjectLocked), or waited on while it holds objects.
 */
import { BUCKET_REASONS, type Bucket } from "../../crds/bucket.js";
import type { OwnReason } from "../../crds/reasons/own.js";
import { ServiceNotFoundError } from "../../service/errors.js";
import type { ObjectStorageClient } from "../../service/object-storage.js";
import {
  earliestRelease,
  lockWords,
  ObjectsLockedError,
} from "../../service/object-storage-lock.js";
import type { BeforeDeleteResult, ManagedCall } from "../managed/call.js";
import { DELETE_NOT_HONOURED } from "../managed/deletion.js";
import { notTheRecorded } from "./ownership.js";

const R = BUCKET_REASONS.names;

/** What the deletion of bucket `name` of `call`'s object waits for, if anything. */
export async function beforeBucketDelete(
  s3: ObjectStorageClient,
  call: ManagedCall<Bucket>,
  name: string,
  pollIntervalMs: number,
): Promise<BeforeDeleteResult> {
  try {
    if (await notTheRecorded(s3, call.obj, name)) {
      // Said unless it is gone: the loop records Deleted next.
      const presence = await s3.headBucket(name).catch(() => "Forbidden");
      const age = listedLate(call);
      if (presence === "Present" && age !== undefined) {
        return {
          waiting: `the account's bucket list does not show bucket ${name} yet, ${Math.round(age / 1000)} s after this object was made (S3 lists new buckets eventually); listing it again before emptying and deleting it`,
          requeueAfterMs: LIST_AGAIN_MS,
        };
      }
      if (presence !== "Absent") {
        call.warning(
          DELETE_NOT_HONOURED,
          `bucket ${name} is left as it is, neither emptied nor deleted: it is not the one this object recorded (the account's bucket list does not have it, or it was made outside since under its name)`,
        );
      }
      return "Done";
    }
    return await emptied(s3, call, name, pollIntervalMs);
  } catch (err) {
    if (err instanceof ServiceNotFoundError) return "Done";
    throw err;
  }
}

/** How long after its object was made the account's list may not show a bucket yet. */
export const BUCKET_LIST_LAG_MS = 60_000;
const LIST_AGAIN_MS = 5_000;

/**
 * The age of `call`'s object when the account's list may still be about to show its
 * bucket (never listed for the status, the object younger than
 * {@link BUCKET_LIST_LAG_MS}); undefined otherwise.
 */
function listedLate(call: ManagedCall<Bucket>): number | undefined {
  if (call.obj.status?.creationTime !== undefined) return undefined;
  const made = Date.parse(call.obj.metadata?.creationTimestamp ?? "");
  const age = call.now().getTime() - made;
  return Number.isFinite(age) && age < BUCKET_LIST_LAG_MS ? Math.max(age, 0) : undefined;
}

async function emptied(
  s3: ObjectStorageClient,
  call: ManagedCall<Bucket>,
  name: string,
  pollIntervalMs: number,
): Promise<BeforeDeleteResult> {
  if (call.obj.spec.forceDestroy) {
    let deleted: number;
    let locked: ObjectsLockedError | undefined;
    try {
      deleted = await s3.deleteAllVersions(name);
    } catch (err) {
      if (!(err instanceof ObjectsLockedError)) throw err;
      ({ deleted } = err);
      locked = err;
    }
    if (deleted > 0) {
      call.normal(
        "ObjectsDeleted",
        `deleted ${deleted === 1 ? "1 object version or delete marker" : `${deleted} object versions and delete markers`} of bucket ${name} (spec.forceDestroy)`,
      );
    }
    return locked ? lockedWait(s3, call, locked, pollIntervalMs) : "Done";
  }
  const { count, more } = await s3.countObjectVersions(name);
  if (count === 0) return "Done";
  const howMany = `${more ? "more than " : ""}${count} object${count === 1 && !more ? "" : "s"}`;
  const message = `bucket ${name} holds ${howMany} (versions and delete markers included) and is not deleted: empty it, set spec.forceDestroy: true to delete every version, or set deletionPolicy: Orphan`;
  return wait(call, R.BucketNotEmpty, message, pollIntervalMs);
}

/** A Warning when the wait's message is new, then the wait. */
function wait(
  call: ManagedCall<Bucket>,
  reason: OwnReason,
  message: string,
  requeueAfterMs: number,
): BeforeDeleteResult {
  const prev = call.obj.status?.conditions?.find((c) => c.type === "Ready");
  if (prev?.reason !== reason || prev.message !== message) call.warning(reason, message);
  return { waiting: message, reason, requeueAfterMs };
}

/** Versions shown in a lock's message (each costs two reads). */
const LOCKS_SHOWN = 3;

/**
 * The wait of a forceDestroy that object lock stopped: a few locked versions named
 * (their retention, their legal hold), looked at again every poll, or sooner when the
 * earliest retention named ends.
 */
async function lockedWait(
  s3: ObjectStorageClient,
  call: ManagedCall<Bucket>,
  err: ObjectsLockedError,
  pollIntervalMs: number,
): Promise<BeforeDeleteResult> {
  const shown = err.locked.slice(0, LOCKS_SHOWN);
  const locks = await s3.versionLocks(err.bucket, shown);
  const others = err.locked.length - shown.length;
  const more = others > 0 ? `, and ${others} more` : "";
  const message = `bucket ${err.bucket} is not deleted: object lock keeps ${err.more ? "at least " : ""}${err.locked.length} version${err.locked.length === 1 && !err.more ? "" : "s"} (${locks.map(lockWords).join("; ")}${more}). The operator never bypasses retention nor lifts a legal hold: lift the holds, shorten GOVERNANCE retention yourself, wait until the retention ends, or set deletionPolicy: Orphan`;
  const now = call.now();
  const release = earliestRelease(locks, now);
  const untilRelease = release
    ? release.getTime() - now.getTime() + 1_000
    : Number.POSITIVE_INFINITY;
  return wait(call, R.BucketObjectLocked, message, Math.min(pollIntervalMs, untilRelease));
}
