/**
 * The account's bucket list (object-storage.ts), read page by page. S3 refuses an
 * unpaginated ListBuckets from an account whose bucket quota is above 10,000, so every
 * read asks for pages of {@link BUCKETS_PER_PAGE} (the largest S3 allows: an account of
 * the default quota gets one page) and follows the continuation token. A server that
 * ignores the page size answers all in one page without a token; one that answers the
 * same token again ends the read.
 */
import { ListBucketsCommand, type S3Client } from "@aws-sdk/client-s3";
import { callS3, ObjectStorageAccessDeniedError } from "./object-storage-errors.js";
import type { ListedBucket } from "./object-storage-types.js";

/** Buckets asked for per ListBuckets page. */
export const BUCKETS_PER_PAGE = 10_000;
/** Pages read at most: S3's largest bucket quota (1,000,000) fits. */
const MAX_PAGES = 100;

/** The account's buckets; undefined when the credentials may not list them. */
export async function readAccountBuckets(s3: S3Client): Promise<ListedBucket[] | undefined> {
  const buckets: ListedBucket[] = [];
  let token: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const input = { MaxBuckets: BUCKETS_PER_PAGE, ...(token ? { ContinuationToken: token } : {}) };
    const out = await callS3("ListBuckets", "*", () =>
      s3.send(new ListBucketsCommand(input)),
    ).catch((e: unknown) => {
      if (e instanceof ObjectStorageAccessDeniedError) return undefined;
      throw e;
    });
    if (!out) return undefined;
    for (const b of out.Buckets ?? []) {
      buckets.push({
        name: b.Name ?? "",
        ...(b.CreationDate ? { creationDate: b.CreationDate } : {}),
      });
    }
    const next = out.ContinuationToken;
    if (!next || next === token) break;
    token = next;
  }
  return buckets;
}
