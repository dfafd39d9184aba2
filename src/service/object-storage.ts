/**
 * The service's S3-compatible object storage (`{object_storage_url}`), through
 * `@aws-sdk/client-s3` with path-style addressing (custom endpoints rarely serve
 * virtual-host buckets). The SDK signs every request (SigV4); nothing here signs by
 * hand. Buckets are made, listed, emptied and deleted here; their features are read
 * and written in canonical shapes (object-storage-types.ts), which the Bucket
 * controller compares with its spec, by object-storage-features.ts. Every failure is a
 * service error (object-storage-errors.ts).
 */
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  HeadBucketCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import { DEFAULT_IDLE_SOCKET_TIMEOUT_MS } from "./defaults.js";
import { idleBoundedAgents } from "./http-exchange.js";
import { countObjectVersions, deleteAllVersions } from "./object-storage-empty.js";
import {
  attemptsTold,
  callS3,
  createdByEarlierAttempt,
  followsReachedAttempt,
  objectStorageError,
  s3ErrorCode,
} from "./object-storage-errors.js";
import { BucketFeatures } from "./object-storage-features.js";
import { headRefusal } from "./object-storage-head.js";
import { readAccountBuckets } from "./object-storage-list.js";
import type { UndeletedVersion, VersionLock } from "./object-storage-lock.js";
import { signedFor } from "./object-storage-region.js";
import type {
  BucketPresence,
  CorsRule,
  LifecycleRule,
  ListedBucket,
  ObjectStorageOptions,
  VersioningState,
} from "./object-storage-types.js";
import { proxyOptionsFor } from "./service-proxy.js";
import { abandoned } from "./transport-errors.js";

export type {
  BucketPresence,
  CorsRule,
  LifecycleRule,
  ListedBucket,
  ObjectStorageOptions,
  ObjectStorageSettings,
  S3Credentials,
  VersioningState,
} from "./object-storage-types.js";

/** Sockets per origin of one S3 client (the SDK's own default). */
const S3_MAX_SOCKETS = 50;

/** Client of the object storage of one account (one endpoint, one key pair). */
export class ObjectStorageClient {
  readonly endpoint: string;
  readonly region: string;
  private readonly s3: S3Client;
  private readonly features: BucketFeatures;

  constructor(options: ObjectStorageOptions) {
    this.endpoint = options.endpoint.replace(/\/+$/, "");
    this.region = options.region;
    const agents = idleBoundedAgents(
      options.idleSocketTimeoutMs ?? DEFAULT_IDLE_SOCKET_TIMEOUT_MS,
      S3_MAX_SOCKETS,
      proxyOptionsFor("the object storage", this.endpoint, options.proxyFor),
    );
    this.s3 = new S3Client({
      endpoint: this.endpoint,
      region: options.region,
      forcePathStyle: true,
      maxAttempts: 2,
      // The service client's keep-alive agents (http-exchange.ts); the handler
      // destroys them with the client (close).
      requestHandler: {
        requestTimeout: options.timeoutMs ?? 10_000,
        // Else the SDK only prints a warning (not a log line) and the attempt waits on.
        throwOnRequestTimeout: true,
        httpAgent: agents.http,
        httpsAgent: agents.https,
      },
      // An expiry in the past makes the SDK ask again for every request, so a key
      // rotated in the Secret is used at once (the reader caches the file itself).
      credentials: async () => ({ ...(await options.credentials()), expiration: new Date(0) }),
    });
    attemptsTold(this.s3, agents.proxy, options.credentialsSource, options.credentialsRefused);
    this.s3.middlewareStack.add(
      (next) => (args) =>
        next(args).catch((err: unknown) => {
          throw signedFor(err, options.region);
        }),
      { step: "initialize", name: "aidcSignedRegion" },
    );
    const { mayCall } = options;
    if (mayCall) {
      // Inside the SDK's retries, after signing: every attempt asks, right before it is sent.
      this.s3.middlewareStack.add(
        (next, context) => async (args) => {
          if (mayCall()) return next(args);
          const operation = context.commandName?.replace(/Command$/, "") ?? "request";
          const bucket = (args.input as { Bucket?: string }).Bucket;
          const where = `S3 ${operation}${bucket ? ` of bucket ${bucket}` : ""}`;
          throw abandoned({ endpoint: `s3:${operation}`, where, method: "", idempotent: true });
        },
        { step: "finalizeRequest", priority: "low", name: "aidcMayCall" },
      );
    }
    this.features = new BucketFeatures(this.s3);
  }

  /** The path-style URL of `bucket`. */
  bucketUrl(bucket: string): string {
    return `${this.endpoint}/${bucket}`;
  }

  /** Closes the client's connections. */
  close(): void {
    this.s3.destroy();
  }

  /**
   * Absent (404), Present (200: it may be used, yet it may be another account's that
   * grants this one s3:ListBucket; the account's bucket list tells) or Forbidden
   * (another account's).
   */
  async headBucket(bucket: string): Promise<BucketPresence> {
    try {
      await this.s3.send(new HeadBucketCommand({ Bucket: bucket }));
      return "Present";
    } catch (err) {
      return headRefusal(this.s3, bucket, err, () => this.listBuckets());
    }
  }

  /**
   * The account's buckets with their creation dates; none when the credentials may not
   * list them (s3:ListAllMyBuckets is granted on every bucket or none, so credentials
   * scoped to their own buckets often lack it).
   */
  async listBuckets(): Promise<ListedBucket[]> {
    return (await this.accountBuckets()) ?? [];
  }

  /**
   * The account's buckets, read now (S3 lists only the caller's own: what decides
   * whether a bucket is the account's); undefined when the credentials may not list them.
   */
  accountBuckets(): Promise<ListedBucket[] | undefined> {
    const listed = { at: Date.now(), read: readAccountBuckets(this.s3) };
    this.listed = listed;
    // A failed read is not kept.
    listed.read.catch(() => {
      if (this.listed === listed) this.listed = undefined;
    });
    return listed.read;
  }

  /**
   * {@link accountBuckets} as read at most `maxAgeMs` ago: one read shared by every
   * caller within it (those that wait on it too), so that the polls of many buckets of
   * one connection send one ListBuckets, not one each.
   */
  recentBuckets(maxAgeMs: number): Promise<ListedBucket[] | undefined> {
    const listed = this.listed;
    if (listed && Date.now() - listed.at <= maxAgeMs) return listed.read;
    return this.accountBuckets();
  }

  /** The last read of the account's buckets, and when it was sent. */
  private listed?: { at: number; read: Promise<ListedBucket[] | undefined> };

  /**
   * Creates `bucket`: "AlreadyOwnedByYou" when this account has it already,
   * "TakenElsewhere" when another account has the name (BucketAlreadyExists).
   */
  async createBucket(bucket: string): Promise<"Created" | "AlreadyOwnedByYou" | "TakenElsewhere"> {
    try {
      await this.s3.send(
        new CreateBucketCommand({
          Bucket: bucket,
          // us-east-1 is the one region that takes no location constraint.
          ...(this.region && this.region !== "us-east-1"
            ? { CreateBucketConfiguration: { LocationConstraint: this.region as never } }
            : {}),
        }),
      );
      return "Created";
    } catch (err) {
      const code = s3ErrorCode(err);
      // SeaweedFS answers BucketAlreadyExists for a bucket of the account with object
      // lock: the account's bucket list tells its own from another's. Not the HEAD: it
      // answers 200 for another account's bucket that grants this one s3:ListBucket.
      const owned =
        code === "BucketAlreadyOwnedByYou" ||
        (code === "BucketAlreadyExists" &&
          (await this.listBuckets()).some((b) => b.name === bucket));
      if (code === "BucketAlreadyExists" && !owned) return "TakenElsewhere";
      if (!owned) throw objectStorageError("CreateBucket", bucket, err, true);
      if (followsReachedAttempt(err)) throw createdByEarlierAttempt(bucket, err);
      return "AlreadyOwnedByYou";
    }
  }

  /** Deletes the (empty) bucket. */
  async deleteBucket(bucket: string): Promise<void> {
    await callS3("DeleteBucket", bucket, () =>
      this.s3.send(new DeleteBucketCommand({ Bucket: bucket })),
    );
  }

  // --- the bucket's features (object-storage-features.ts) ------------------------

  getVersioning(bucket: string): Promise<VersioningState> {
    return this.features.getVersioning(bucket);
  }
  putVersioning(bucket: string, state: "Enabled" | "Suspended"): Promise<void> {
    return this.features.putVersioning(bucket, state);
  }
  getLifecycle(bucket: string): Promise<LifecycleRule[]> {
    return this.features.getLifecycle(bucket);
  }
  /** Replaces the lifecycle configuration; an empty list removes it. */
  putLifecycle(bucket: string, rules: readonly LifecycleRule[]): Promise<void> {
    return this.features.putLifecycle(bucket, rules);
  }
  /** The bucket policy (JSON text), or undefined when the bucket has none. */
  getPolicy(bucket: string): Promise<string | undefined> {
    return this.features.getPolicy(bucket);
  }
  /** Sets the bucket policy; undefined removes it. */
  putPolicy(bucket: string, policy: string | undefined): Promise<void> {
    return this.features.putPolicy(bucket, policy);
  }
  getTags(bucket: string): Promise<Record<string, string>> {
    return this.features.getTags(bucket);
  }
  /** Replaces the bucket's tags; an empty map removes them. */
  putTags(bucket: string, tags: Record<string, string>): Promise<void> {
    return this.features.putTags(bucket, tags);
  }
  getCors(bucket: string): Promise<CorsRule[]> {
    return this.features.getCors(bucket);
  }
  /** Replaces the CORS configuration; an empty list removes it. */
  putCors(bucket: string, rules: readonly CorsRule[]): Promise<void> {
    return this.features.putCors(bucket, rules);
  }

  /**
   * How many object versions and delete markers the bucket holds, counted up to
   * `limit` (one listing page): `more` is true when there are more than counted.
   */
  countObjectVersions(bucket: string, limit = 1000): Promise<{ count: number; more: boolean }> {
    return countObjectVersions(this.s3, bucket, limit);
  }

  /**
   * Deletes every object version and delete marker of the bucket (so that it can be
   * deleted), a page of up to 1000 at a time (object-storage-empty.ts). Resolves with
   * the number deleted. A page with versions object lock keeps ends it with
   * ObjectsLockedError (nothing bypassed).
   */
  deleteAllVersions(bucket: string): Promise<number> {
    return deleteAllVersions(this.s3, bucket, (v) => this.versionLocks(bucket, v));
  }

  /** What locks each of `versions` (retention, legal hold); a refused read tells nothing. */
  versionLocks(bucket: string, versions: readonly UndeletedVersion[]): Promise<VersionLock[]> {
    return this.features.versionLocks(bucket, versions);
  }
}

/**
 * The object storage an object uses (its connection's), or undefined when its
 * connection has none configured.
 */
export type ObjectStorageResolver = (obj: {
  metadata?: { namespace?: string; name?: string };
}) => Promise<ObjectStorageClient | undefined>;
