/**
 * Object lock (S3 WORM) as the emptying of a bucket meets it: a version under retention
 * (GOVERNANCE or COMPLIANCE) or a legal hold refuses its delete. Nothing here bypasses
 * retention or lifts a hold (the data is the user's): the failures of a DeleteObjects
 * are told apart, and what locks a version is put in words. No S3 client is loaded by
 * this module (object-storage.ts reads the locks).
 */
import { ServiceRefusedError } from "./errors.js";
import { objectStorageError } from "./object-storage-errors.js";

/** One version a DeleteObjects did not delete, with the server's code and message. */
export interface UndeletedVersion {
  key: string;
  versionId?: string;
  code?: string;
  message?: string;
}

/** What locks one version, as far as its reads tell (a read refused tells nothing). */
export interface VersionLock {
  key: string;
  versionId?: string;
  /** GOVERNANCE or COMPLIANCE: the retention's mode. */
  mode?: string;
  retainUntil?: Date;
  legalHold?: boolean;
}

/**
 * Whether a version's delete was refused by its lock: MinIO answers InvalidRequest
 * "Object is WORM protected and cannot be overwritten", S3 AccessDenied "Access Denied
 * because object protected by object lock" ({@link lockRefusals} tells SeaweedFS's).
 */
export function refusedByLock(v: Pick<UndeletedVersion, "message">): boolean {
  return /\bWORM\b|object lock/i.test(v.message ?? "");
}

/** The AccessDenied versions whose locks are read before one is called a lock refusal. */
const LOCK_SAMPLE = 5;

/**
 * `failed` with the AccessDenied refusals that name no lock (SeaweedFS answers a bare
 * "Access Denied." for a version under a legal hold or retention) told apart: when each
 * of the first few has a lock (`locksOf` reads them), they all get a message naming
 * object lock; otherwise they are left as they are, a missing permission.
 */
export async function lockRefusals(
  failed: readonly UndeletedVersion[],
  locksOf: (versions: UndeletedVersion[]) => Promise<VersionLock[]>,
  now = new Date(),
): Promise<UndeletedVersion[]> {
  const bare = failed.filter((f) => f.code === "AccessDenied" && !refusedByLock(f));
  if (bare.length === 0) return [...failed];
  const locks = await locksOf(bare.slice(0, LOCK_SAMPLE));
  const holds = (l: VersionLock) =>
    l.legalHold === true || (l.retainUntil?.getTime() ?? 0) > now.getTime();
  if (!locks.every(holds)) return [...failed];
  return failed.map((f) =>
    bare.includes(f) ? { ...f, message: `${f.message ?? ""} (object lock holds it)` } : f,
  );
}

/**
 * Versions of `bucket` that object lock keeps from being deleted: the bucket cannot be
 * deleted until the user lifts the locks or their retention ends. Terminal, but
 * external: no change of the object helps, one on the server does.
 */
export class ObjectsLockedError extends ServiceRefusedError {
  /** Condition reason. */
  readonly reason = "BucketObjectLocked";
  /** The hold lies with the bucket's data, not the object. */
  readonly external = true;

  constructor(
    readonly bucket: string,
    /** The locked versions of the page the delete stopped at. */
    readonly locked: readonly UndeletedVersion[],
    /** Versions deleted before it stopped. */
    readonly deleted: number,
    /** The bucket has versions beyond that page. */
    readonly more = false,
  ) {
    super(`S3 DeleteObjects of bucket ${bucket}: ${locked.length} versions are locked`, {
      code: undefined,
      endpoint: "s3:DeleteObjects",
      serviceMessage: locked[0]?.message,
    });
  }
}

/**
 * The error of a DeleteObjects of a page of `tried` versions of `bucket` (`more`: not
 * its last) that left `failed`, after `deleted` were: {@link ObjectsLockedError} when
 * each was refused by its lock, else the first other failure as a service error.
 */
export function deleteFailure(
  bucket: string,
  failed: readonly UndeletedVersion[],
  page: { tried: number; deleted: number; more: boolean },
): Error {
  const { tried, deleted, more } = page;
  const other = failed.find((f) => !refusedByLock(f));
  if (!other) return new ObjectsLockedError(bucket, failed, deleted, more);
  return objectStorageError("DeleteObjects", bucket, {
    name: other.code ?? "DeleteFailed",
    Code: other.code,
    message: `${failed.length} of ${tried} versions not deleted (${other.code}: ${other.message})`,
    $metadata: { httpStatusCode: 500 },
  });
}

const rfc3339 = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, "Z");

/** `lock` in words: "k (version v) under COMPLIANCE retention until ..., and a legal hold". */
export function lockWords(lock: VersionLock): string {
  const what = `${lock.key}${lock.versionId && lock.versionId !== "null" ? ` (version ${lock.versionId})` : ""}`;
  const held: string[] = [];
  if (lock.mode) {
    const until = lock.retainUntil ? ` until ${rfc3339(lock.retainUntil)}` : "";
    held.push(`${lock.mode} retention${until}`);
  }
  if (lock.legalHold) held.push("a legal hold");
  return held.length ? `${what} under ${held.join(" and ")}` : `${what} (lock unreadable)`;
}

/**
 * The earliest end of a retention of `locks` still ahead of `now` without a legal hold
 * beside it: when one of them can next be deleted without the user's doing.
 */
export function earliestRelease(locks: readonly VersionLock[], now: Date): Date | undefined {
  const ends = locks
    .filter((l) => !l.legalHold && l.retainUntil && l.retainUntil.getTime() > now.getTime())
    .map((l) => (l.retainUntil as Date).getTime());
  return ends.length ? new Date(Math.min(...ends)) : undefined;
}
