/**
 * What a refused HEAD of a bucket means (object-storage.ts headBucket). A HEAD answer
 * has no body, so its status is all it says: a 403 is told apart by the bucket list, a
 * 400 the region header does not explain (servers that send no x-amz-bucket-region) by
 * a GET of the bucket under the same permission, whose answer has the code and message.
 */
import { ListObjectsV2Command, type S3Client } from "@aws-sdk/client-s3";
import { objectStorageError, s3ErrorCode, s3HttpStatus } from "./object-storage-errors.js";
import { answeredRegion } from "./object-storage-region.js";
import type { BucketPresence, ListedBucket } from "./object-storage-types.js";

/** The presence of `bucket` whose HEAD failed with `err`, or the error that says why. */
export async function headRefusal(
  s3: S3Client,
  bucket: string,
  err: unknown,
  listBuckets: () => Promise<ListedBucket[]>,
): Promise<BucketPresence> {
  const status = s3HttpStatus(err);
  if (status === 404) return "Absent";
  if (status === 403) {
    // A bucket of another account, refused credentials and credentials without
    // s3:ListBucket look alike. The bucket list tells the first two apart (it throws
    // the credentials error) and lists the account's own.
    const listed = await listBuckets();
    if (!listed.some((b) => b.name === bucket)) return "Forbidden";
    throw objectStorageError("HeadBucket", bucket, {
      name: "AccessDenied",
      Code: "AccessDenied",
      message: "HEAD answered 403, yet the account lists the bucket",
      $metadata: { httpStatusCode: 403 },
    });
  }
  if (status === 400 && !answeredRegion(err, status, s3ErrorCode(err))) {
    const told = await s3.send(new ListObjectsV2Command({ Bucket: bucket, MaxKeys: 1 })).then(
      () => undefined,
      (e: unknown) => (s3HttpStatus(e) === 400 ? e : undefined),
    );
    if (told) throw objectStorageError("HeadBucket", bucket, told);
  }
  throw objectStorageError("HeadBucket", bucket, err);
}
