/**
 * Emptying a bucket (object-storage.ts): its object versions and delete markers
 * counted, or deleted a listing page at a time (its objects, on a server without
 * versions). A page the server answered as deleted
 * that the next listing shows again ends the emptying (gofakes3 answers a delete by
 * version id "null" as done and keeps the object): the next try comes on the retry
 * backoff, not at once.
 */
import {
  DeleteObjectsCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  type ObjectIdentifier,
  type S3Client,
} from "@aws-sdk/client-s3";
import { ServiceUnavailableError } from "./errors.js";
import { callS3, ObjectStorageNotImplementedError } from "./object-storage-errors.js";
import {
  deleteFailure,
  lockRefusals,
  type UndeletedVersion,
  type VersionLock,
} from "./object-storage-lock.js";

/**
 * One listing page of `bucket`'s versions and delete markers, up to `limit`; of its
 * objects (ListObjectsV2, no version ids) on a server without ListObjectVersions
 * (Garage, which keeps no versions).
 */
async function listPage(
  s3: S3Client,
  bucket: string,
  limit: number,
): Promise<{ ids: ObjectIdentifier[]; more: boolean }> {
  try {
    const page = await callS3("ListObjectVersions", bucket, () =>
      s3.send(new ListObjectVersionsCommand({ Bucket: bucket, MaxKeys: limit })),
    );
    const ids = [...(page.Versions ?? []), ...(page.DeleteMarkers ?? [])].map((v) => ({
      Key: v.Key ?? "",
      ...(v.VersionId ? { VersionId: v.VersionId } : {}),
    }));
    return { ids, more: Boolean(page.IsTruncated) };
  } catch (err) {
    if (!(err instanceof ObjectStorageNotImplementedError)) throw err;
    const page = await callS3("ListObjectsV2", bucket, () =>
      s3.send(new ListObjectsV2Command({ Bucket: bucket, MaxKeys: limit })),
    );
    const ids = (page.Contents ?? []).map((o) => ({ Key: o.Key ?? "" }));
    return { ids, more: Boolean(page.IsTruncated) };
  }
}

/** How many versions and delete markers `bucket` holds, up to `limit`; `more` past it. */
export async function countObjectVersions(
  s3: S3Client,
  bucket: string,
  limit: number,
): Promise<{ count: number; more: boolean }> {
  const { ids, more } = await listPage(s3, bucket, limit);
  return { count: ids.length, more };
}

const idOf = (v: ObjectIdentifier) => `${v.Key}\n${v.VersionId ?? ""}`;

/** The error of versions a DeleteObjects answered as deleted that are listed again. */
function notDeleted(bucket: string, again: readonly ObjectIdentifier[]): ServiceUnavailableError {
  const first = again[0] as ObjectIdentifier;
  const [what, them] =
    again.length === 1 ? ["1 version", "it"] : [`${again.length} versions`, "them"];
  return new ServiceUnavailableError(
    `S3 DeleteObjects of bucket ${bucket}: the object storage answered ${what} as deleted, yet lists ${them} still (${first.Key} version ${first.VersionId ?? "none"}): it does not delete ${them}; empty the bucket with its own tools, or set deletionPolicy: Orphan`,
    { code: undefined, endpoint: "s3:DeleteObjects" },
  );
}

/**
 * Deletes every version and delete marker of `bucket`, a page of up to 1000 at a time;
 * resolves with the number deleted. A page with versions object lock keeps ends it with
 * ObjectsLockedError (nothing bypassed; `locksOf` reads the locks).
 */
export async function deleteAllVersions(
  s3: S3Client,
  bucket: string,
  locksOf: (versions: UndeletedVersion[]) => Promise<VersionLock[]>,
): Promise<number> {
  let deleted = 0;
  let answeredDeleted = new Set<string>();
  for (;;) {
    const page = await listPage(s3, bucket, 1000);
    const { ids } = page;
    if (ids.length === 0) return deleted;
    const again = ids.filter((v) => answeredDeleted.has(idOf(v)));
    if (again.length > 0) throw notDeleted(bucket, again);
    const out = await callS3(
      "DeleteObjects",
      bucket,
      () =>
        s3.send(
          new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: ids, Quiet: true } }),
        ),
      true,
    );
    const failed = (out.Errors ?? []).map((e) => ({
      key: e.Key ?? "",
      ...(e.VersionId ? { versionId: e.VersionId } : {}),
      ...(e.Code ? { code: e.Code } : {}),
      ...(e.Message ? { message: e.Message } : {}),
    }));
    if (failed.length > 0) {
      const done = deleted + ids.length - failed.length;
      const { more } = page;
      const told = await lockRefusals(failed, locksOf);
      throw deleteFailure(bucket, told, { tried: ids.length, deleted: done, more });
    }
    answeredDeleted = new Set(ids.map(idOf));
    deleted += ids.length;
  }
}
