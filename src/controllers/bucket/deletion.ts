/**
 * The Bucket's step before the delete of a Delete-policy deletion (external.ts
 * beforeDelete): a bucket made outside since under its name is another's and left alone
 * (changes.ts recreatedSince); one deleted outside already has nothing to empty (the
 * delete and the read after it find it gone); else it is emptied under
 * spec.forceDestroy, or waited on while it holds objects.
 */
import { BUCKET_REASONS, type Bucket } from "../../crds/bucket.js";
import { ServiceNotFoundError } from "../../service/errors.js";
import type { ObjectStorageClient } from "../../service/object-storage.js";
import type { BeforeDeleteResult, ManagedCall } from "../managed/call.js";
import { recreatedSince } from "./changes.js";

const R = BUCKET_REASONS.names;

/** What the deletion of bucket `name` of `call`'s object waits for, if anything. */
export async function beforeBucketDelete(
  s3: ObjectStorageClient,
  call: ManagedCall<Bucket>,
  name: string,
  pollIntervalMs: number,
): Promise<BeforeDeleteResult> {
  try {
    if (await recreatedSince(s3, call.obj, name)) return "Done";
    return await emptied(s3, call, name, pollIntervalMs);
  } catch (err) {
    if (err instanceof ServiceNotFoundError) return "Done";
    throw err;
  }
}

async function emptied(
  s3: ObjectStorageClient,
  call: ManagedCall<Bucket>,
  name: string,
  pollIntervalMs: number,
): Promise<BeforeDeleteResult> {
  if (call.obj.spec.forceDestroy) {
    const deleted = await s3.deleteAllVersions(name);
    if (deleted > 0) {
      call.normal(
        "ObjectsDeleted",
        `deleted ${deleted} object versions and delete markers of bucket ${name} (spec.forceDestroy)`,
      );
    }
    return "Done";
  }
  const { count, more } = await s3.countObjectVersions(name);
  if (count === 0) return "Done";
  const howMany = `${more ? "more than " : ""}${count} object${count === 1 && !more ? "" : "s"}`;
  const message = `bucket ${name} holds ${howMany} (versions and delete markers included) and is not deleted: empty it, set spec.forceDestroy: true to delete every version, or set deletionPolicy: Orphan`;
  const prev = call.obj.status?.conditions?.find((c) => c.type === "Ready");
  if (prev?.reason !== "BucketNotEmpty" || prev.message !== message) {
    call.warning(R.BucketNotEmpty, message);
  }
  return { waiting: message, reason: R.BucketNotEmpty, requeueAfterMs: pollIntervalMs };
}
