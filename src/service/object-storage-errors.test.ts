import { describe, expect, it } from "vitest";
import { objectStorageError } from "./object-storage-errors.js";

/** An error as the S3 SDK throws it for an answer with `status` and `code`. */
const sdkError = (status: number, code: string, message: string) =>
  Object.assign(new Error(message), {
    name: code,
    Code: code,
    $metadata: { httpStatusCode: status },
  });

describe("objectStorageError's message", () => {
  it("names the bucket of a bucket's call, and none for a call on every bucket", () => {
    const refused = sdkError(403, "InvalidAccessKeyId", "The Access Key Id does not exist.");
    expect(objectStorageError("ListBuckets", "*", refused).message).toMatch(
      /^S3 ListBuckets: InvalidAccessKeyId: The Access Key Id does not exist\./,
    );
    expect(objectStorageError("GetBucketTagging", "data", refused).message).toMatch(
      /^S3 GetBucketTagging of bucket data: InvalidAccessKeyId/,
    );
  });
});
