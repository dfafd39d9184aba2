/**
 * Whose a bucket is. S3 answers a HEAD 200 for another account's bucket that grants
 * this one s3:ListBucket, so a HEAD's 200 says only that the bucket is there: the
 * account's bucket list (S3 lists only the caller's own) says whether it is the
 * account's. A bucket the list lacks is never bound, changed, emptied nor deleted. A
 * refused list (credentials without s3:ListAllMyBuckets) tells nothing: a name to
 * create is then refused, and a bound bucket is taken as the one bound
 * (docs/object-storage.md).
 */
import { BUCKET_REASONS, type Bucket } from "../../crds/bucket.js";
import type { ListedBucket, ObjectStorageClient } from "../../service/object-storage.js";
import { accessHint } from "../../service/object-storage-errors.js";
import type { PreflightRefusal, SentCreate } from "../managed/call.js";
import { feature } from "./changes.js";
import {
  CREATION_CLOCK_SKEW_MS,
  isNotImplemented,
  markOf,
  OWNER_TAG,
  recreatedOutside,
} from "./features.js";

const R = BUCKET_REASONS.names;

/** What the account's bucket list says of one bucket. */
export interface Listing {
  /** False when the credentials may not list the account's buckets. */
  readable: boolean;
  /** The bucket's entry, when the list has it. */
  entry?: ListedBucket;
  /** Read now, not taken from an earlier read. */
  fresh: boolean;
}

/**
 * What the account's bucket list says of `name`: read now, or with `maxAgeMs` from a
 * list read at most that long ago (one list for the routine polls of a connection's
 * buckets) when that list has it or was refused; one that lacks it is read again (it
 * may be older than the bucket).
 */
export async function listing(
  s3: ObjectStorageClient,
  name: string,
  maxAgeMs = 0,
): Promise<Listing> {
  if (maxAgeMs > 0) {
    const recent = await s3.recentBuckets(maxAgeMs);
    const entry = recent?.find((b) => b.name === name);
    if (entry) return { readable: true, entry, fresh: false };
    if (!recent) return { readable: false, fresh: false };
  }
  const now = await s3.accountBuckets();
  const entry = now?.find((b) => b.name === name);
  return { readable: now !== undefined, ...(entry ? { entry } : {}), fresh: true };
}

/** True when the account's list was read and lacks the bucket: not the account's. */
export function notTheAccounts(l: Listing): boolean {
  return l.readable && !l.entry;
}

/**
 * The preflight's refusal of a name a HEAD finds (the create decides with spec.adopt,
 * external.ts): another account's (403, or 200 and not in the account's list), or the
 * account's own without spec.adopt.
 */
export async function presenceRefusal(
  s3: ObjectStorageClient,
  name: string,
  adopt: boolean,
): Promise<PreflightRefusal | undefined> {
  const presence = await s3.headBucket(name);
  if (presence === "Forbidden") {
    return {
      reason: R.BucketNameTaken,
      message: `a bucket named ${name} answered 403 to HEAD: another account has it (bucket names are global: choose another spec.name), or ${accessHint("HeadBucket", name)}`,
      retry: true,
    };
  }
  if (presence !== "Present" || adopt) return undefined;
  const l = await listing(s3, name);
  if (l.entry) {
    return {
      reason: R.BucketExistsNotAdopted,
      message: `a bucket named ${name} exists already in the account; it is not taken over unless spec.adopt is true (the name may belong to another team)`,
    };
  }
  if (l.readable) {
    return {
      reason: R.BucketNameTaken,
      message: `a bucket named ${name} belongs to another account (it answers HEAD, as a bucket that grants this account a read does, and the account's bucket list does not have it); choose another spec.name`,
    };
  }
  return {
    reason: R.BucketExistsNotAdopted,
    message: `a bucket named ${name} exists; the credentials may not list the account's buckets (s3:ListAllMyBuckets), so whether it is the account's or another account's that grants this one a read cannot be told. It is not taken over unless spec.adopt is true`,
  };
}

/**
 * The bucket a create whose answer was lost made (the loop's lookup by token): `name`
 * when the account has it and it carries the object's owner mark, or, without a mark
 * (the crash came before it was written), was created after the create was sent; the
 * mark is written then.
 */
export async function madeByCreate(
  s3: ObjectStorageClient,
  obj: Bucket,
  name: string,
  create: SentCreate,
): Promise<string[]> {
  if ((await s3.headBucket(name)) !== "Present") return [];
  const [tags, l] = await Promise.all([feature(() => s3.getTags(name)), listing(s3, name)]);
  if (notTheAccounts(l)) return [];
  const mark = isNotImplemented(tags) ? undefined : tags[OWNER_TAG];
  if (mark) return mark === markOf(obj) ? [name] : [];
  const since = Date.parse(create.at);
  const created = l.entry?.creationDate;
  if (!Number.isFinite(since) || !created) return [];
  if (created.getTime() < since - CREATION_CLOCK_SKEW_MS) return [];
  await s3.putTags(name, {
    ...(isNotImplemented(tags) ? {} : tags),
    [OWNER_TAG]: markOf(obj),
  });
  return [name];
}

/**
 * Whether bucket `name` is not the one `obj` recorded, to be left alone (never emptied
 * nor deleted): one the account's list lacks (another account's, or gone), or one made
 * outside since under its name (features.ts recreatedOutside).
 */
export async function notTheRecorded(
  s3: ObjectStorageClient,
  obj: Pick<Bucket, "metadata" | "status">,
  name: string,
): Promise<boolean> {
  const recorded = obj.status?.creationTime !== undefined;
  const [tags, l] = await Promise.all([
    recorded ? feature(() => s3.getTags(name)) : undefined,
    listing(s3, name),
  ]);
  if (notTheAccounts(l)) return true;
  if (!tags) return false;
  const creationDate = l.entry?.creationDate;
  return recreatedOutside(obj, { tags, ...(creationDate ? { creationDate } : {}) });
}
