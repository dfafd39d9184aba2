/**
 * The service's S3-compatible object storage (`{object_storage_url}`), through
 * `@aws-sdk/client-s3` with path-style addressing (custom endpoints rarely serve
 * virtual-host buckets). The SDK signs every request (SigV4); nothing here signs by
 * hand. Each bucket feature is read and written in the canonical shapes below, which
 * the Bucket controller compares with its spec. Every failure is a service error
 * (object-storage-errors.ts).
 */
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteBucketCorsCommand,
  DeleteBucketLifecycleCommand,
  DeleteBucketPolicyCommand,
  DeleteBucketTaggingCommand,
  DeleteObjectsCommand,
  GetBucketCorsCommand,
  GetBucketLifecycleConfigurationCommand,
  GetBucketPolicyCommand,
  GetBucketTaggingCommand,
  GetBucketVersioningCommand,
  HeadBucketCommand,
  ListBucketsCommand,
  ListObjectVersionsCommand,
  PutBucketCorsCommand,
  PutBucketLifecycleConfigurationCommand,
  PutBucketPolicyCommand,
  PutBucketTaggingCommand,
  PutBucketVersioningCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import { DEFAULT_IDLE_SOCKET_TIMEOUT_MS } from "./defaults.js";
import { idleBoundedAgents } from "./idle-bounded-agent.js";
import { objectStorageError, s3ErrorCode, s3HttpStatus } from "./object-storage-errors.js";

/** An S3 access key pair. */
export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/** Where the object storage is and how to sign for it. */
export interface ObjectStorageOptions {
  /** The S3 endpoint (`{object_storage_url}`). */
  endpoint: string;
  /** The region requests are signed for. */
  region: string;
  /** The current key pair; called for every request, so a rotated Secret takes effect. */
  credentials: () => Promise<S3Credentials>;
  /** Timeout of one HTTP attempt. Default 10 s. */
  timeoutMs?: number;
  /**
   * Keep-alive connections idle this long are closed, and never reused, before the
   * server closes them (the service client's `service.idleSocketTimeoutMs`, 4 s by
   * default: docs/service-assumptions.md section 3): a request written on a connection
   * the server is closing fails with ECONNRESET. Default DEFAULT_IDLE_SOCKET_TIMEOUT_MS.
   */
  idleSocketTimeoutMs?: number;
}

/** Sockets per origin of one S3 client (the SDK's own default). */
const S3_MAX_SOCKETS = 50;

/** One lifecycle rule, as the Bucket spec states it. */
export interface LifecycleRule {
  id: string;
  /** Key prefix the rule applies to ("" for every object). */
  prefix: string;
  enabled: boolean;
  /** Days after which current versions expire. */
  expirationDays?: number;
  /** Days after which noncurrent versions are removed. */
  noncurrentVersionExpirationDays?: number;
}

/** One CORS rule. */
export interface CorsRule {
  allowedOrigins: string[];
  allowedMethods: string[];
  allowedHeaders: string[];
  exposeHeaders: string[];
  maxAgeSeconds?: number;
}

/** Versioning state of a bucket: never enabled, on, or paused. */
export type VersioningState = "Off" | "Enabled" | "Suspended";

/** One bucket of the account, from the bucket list. */
export interface ListedBucket {
  name: string;
  creationDate?: Date;
}

/** Whether a bucket exists, as a HEAD answers it. */
export type BucketPresence = "Absent" | "Owned" | "Forbidden";

const notFoundCodes = new Set([
  "NoSuchLifecycleConfiguration",
  "NoSuchBucketPolicy",
  "NoSuchTagSet",
  "NoSuchCORSConfiguration",
  "NoSuchTagSetError",
]);

/** Client of the object storage of one account (one endpoint, one key pair). */
export class ObjectStorageClient {
  readonly endpoint: string;
  readonly region: string;
  private readonly s3: S3Client;

  constructor(options: ObjectStorageOptions) {
    this.endpoint = options.endpoint.replace(/\/+$/, "");
    this.region = options.region;
    const agents = idleBoundedAgents(
      options.idleSocketTimeoutMs ?? DEFAULT_IDLE_SOCKET_TIMEOUT_MS,
      S3_MAX_SOCKETS,
    );
    this.s3 = new S3Client({
      endpoint: this.endpoint,
      region: options.region,
      forcePathStyle: true,
      maxAttempts: 2,
      // The service client's keep-alive agents (idle-bounded-agent.ts); the handler
      // destroys them with the client (close).
      requestHandler: {
        requestTimeout: options.timeoutMs ?? 10_000,
        httpAgent: agents.http,
        httpsAgent: agents.https,
      },
      // An expiry in the past makes the SDK ask again for every request, so a key
      // rotated in the Secret is used at once (the reader caches the file itself).
      credentials: async () => ({ ...(await options.credentials()), expiration: new Date(0) }),
    });
  }

  /** The path-style URL of `bucket`. */
  bucketUrl(bucket: string): string {
    return `${this.endpoint}/${bucket}`;
  }

  /** Closes the client's connections. */
  close(): void {
    this.s3.destroy();
  }

  private async call<T>(
    operation: string,
    bucket: string,
    run: () => Promise<T>,
    mutating = false,
  ): Promise<T> {
    try {
      return await run();
    } catch (err) {
      throw objectStorageError(operation, bucket, err, mutating);
    }
  }

  /** Reads a feature, answering `empty` when the bucket has none of it configured. */
  private async read<T>(operation: string, bucket: string, run: () => Promise<T>, empty: T) {
    try {
      return await run();
    } catch (err) {
      const code = s3ErrorCode(err);
      if (code && notFoundCodes.has(code)) return empty;
      throw objectStorageError(operation, bucket, err);
    }
  }

  /** Absent (404), Owned (this account may use it) or Forbidden (another account's). */
  async headBucket(bucket: string): Promise<BucketPresence> {
    try {
      await this.s3.send(new HeadBucketCommand({ Bucket: bucket }));
      return "Owned";
    } catch (err) {
      const status = s3HttpStatus(err);
      if (status === 404) return "Absent";
      if (status === 403) {
        // A HEAD answer has no body: a bucket of another account and refused
        // credentials look alike. The bucket list tells them apart (it throws the
        // credentials error).
        await this.listBuckets();
        return "Forbidden";
      }
      throw objectStorageError("HeadBucket", bucket, err);
    }
  }

  /** The account's buckets with their creation dates. */
  async listBuckets(): Promise<ListedBucket[]> {
    const out = await this.call("ListBuckets", "*", () => this.s3.send(new ListBucketsCommand({})));
    return (out.Buckets ?? []).map((b) => ({
      name: b.Name ?? "",
      ...(b.CreationDate ? { creationDate: b.CreationDate } : {}),
    }));
  }

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
      if (s3ErrorCode(err) === "BucketAlreadyOwnedByYou") return "AlreadyOwnedByYou";
      if (s3ErrorCode(err) === "BucketAlreadyExists") return "TakenElsewhere";
      throw objectStorageError("CreateBucket", bucket, err, true);
    }
  }

  /** Deletes the (empty) bucket. */
  async deleteBucket(bucket: string): Promise<void> {
    await this.call("DeleteBucket", bucket, () =>
      this.s3.send(new DeleteBucketCommand({ Bucket: bucket })),
    );
  }

  async getVersioning(bucket: string): Promise<VersioningState> {
    const out = await this.call("GetBucketVersioning", bucket, () =>
      this.s3.send(new GetBucketVersioningCommand({ Bucket: bucket })),
    );
    return out.Status === "Enabled" || out.Status === "Suspended" ? out.Status : "Off";
  }

  async putVersioning(bucket: string, state: "Enabled" | "Suspended"): Promise<void> {
    await this.call("PutBucketVersioning", bucket, () =>
      this.s3.send(
        new PutBucketVersioningCommand({
          Bucket: bucket,
          VersioningConfiguration: { Status: state },
        }),
      ),
    );
  }

  async getLifecycle(bucket: string): Promise<LifecycleRule[]> {
    const out = await this.read(
      "GetBucketLifecycleConfiguration",
      bucket,
      () => this.s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket })),
      { Rules: [], $metadata: {} },
    );
    return (out.Rules ?? []).map((r) => ({
      id: r.ID ?? "",
      prefix: r.Filter?.Prefix ?? r.Filter?.And?.Prefix ?? r.Prefix ?? "",
      enabled: r.Status === "Enabled",
      ...(r.Expiration?.Days ? { expirationDays: r.Expiration.Days } : {}),
      ...(r.NoncurrentVersionExpiration?.NoncurrentDays
        ? { noncurrentVersionExpirationDays: r.NoncurrentVersionExpiration.NoncurrentDays }
        : {}),
    }));
  }

  /** Replaces the lifecycle configuration; an empty list removes it. */
  async putLifecycle(bucket: string, rules: readonly LifecycleRule[]): Promise<void> {
    if (rules.length === 0) {
      await this.call("DeleteBucketLifecycle", bucket, () =>
        this.s3.send(new DeleteBucketLifecycleCommand({ Bucket: bucket })),
      );
      return;
    }
    await this.call("PutBucketLifecycleConfiguration", bucket, () =>
      this.s3.send(
        new PutBucketLifecycleConfigurationCommand({
          Bucket: bucket,
          LifecycleConfiguration: {
            Rules: rules.map((r) => ({
              ID: r.id,
              Filter: { Prefix: r.prefix },
              Status: r.enabled ? "Enabled" : "Disabled",
              ...(r.expirationDays ? { Expiration: { Days: r.expirationDays } } : {}),
              ...(r.noncurrentVersionExpirationDays
                ? {
                    NoncurrentVersionExpiration: {
                      NoncurrentDays: r.noncurrentVersionExpirationDays,
                    },
                  }
                : {}),
            })),
          },
        }),
      ),
    );
  }

  /** The bucket policy (JSON text), or undefined when the bucket has none. */
  async getPolicy(bucket: string): Promise<string | undefined> {
    const out = await this.read(
      "GetBucketPolicy",
      bucket,
      () => this.s3.send(new GetBucketPolicyCommand({ Bucket: bucket })),
      { Policy: undefined, $metadata: {} },
    );
    return out.Policy || undefined;
  }

  /** Sets the bucket policy; undefined removes it. */
  async putPolicy(bucket: string, policy: string | undefined): Promise<void> {
    if (policy === undefined) {
      await this.call("DeleteBucketPolicy", bucket, () =>
        this.s3.send(new DeleteBucketPolicyCommand({ Bucket: bucket })),
      );
      return;
    }
    await this.call("PutBucketPolicy", bucket, () =>
      this.s3.send(new PutBucketPolicyCommand({ Bucket: bucket, Policy: policy })),
    );
  }

  async getTags(bucket: string): Promise<Record<string, string>> {
    const out = await this.read(
      "GetBucketTagging",
      bucket,
      () => this.s3.send(new GetBucketTaggingCommand({ Bucket: bucket })),
      { TagSet: [], $metadata: {} },
    );
    return Object.fromEntries((out.TagSet ?? []).map((t) => [t.Key ?? "", t.Value ?? ""]));
  }

  /** Replaces the bucket's tags; an empty map removes them. */
  async putTags(bucket: string, tags: Record<string, string>): Promise<void> {
    const set = Object.entries(tags).map(([Key, Value]) => ({ Key, Value }));
    if (set.length === 0) {
      await this.call("DeleteBucketTagging", bucket, () =>
        this.s3.send(new DeleteBucketTaggingCommand({ Bucket: bucket })),
      );
      return;
    }
    await this.call("PutBucketTagging", bucket, () =>
      this.s3.send(new PutBucketTaggingCommand({ Bucket: bucket, Tagging: { TagSet: set } })),
    );
  }

  async getCors(bucket: string): Promise<CorsRule[]> {
    const out = await this.read(
      "GetBucketCors",
      bucket,
      () => this.s3.send(new GetBucketCorsCommand({ Bucket: bucket })),
      { CORSRules: [], $metadata: {} },
    );
    return (out.CORSRules ?? []).map((r) => ({
      allowedOrigins: r.AllowedOrigins ?? [],
      allowedMethods: r.AllowedMethods ?? [],
      allowedHeaders: r.AllowedHeaders ?? [],
      exposeHeaders: r.ExposeHeaders ?? [],
      ...(r.MaxAgeSeconds !== undefined ? { maxAgeSeconds: r.MaxAgeSeconds } : {}),
    }));
  }

  /** Replaces the CORS configuration; an empty list removes it. */
  async putCors(bucket: string, rules: readonly CorsRule[]): Promise<void> {
    if (rules.length === 0) {
      await this.call("DeleteBucketCors", bucket, () =>
        this.s3.send(new DeleteBucketCorsCommand({ Bucket: bucket })),
      );
      return;
    }
    await this.call("PutBucketCors", bucket, () =>
      this.s3.send(
        new PutBucketCorsCommand({
          Bucket: bucket,
          CORSConfiguration: {
            CORSRules: rules.map((r) => ({
              AllowedOrigins: r.allowedOrigins,
              AllowedMethods: r.allowedMethods,
              ...(r.allowedHeaders.length ? { AllowedHeaders: r.allowedHeaders } : {}),
              ...(r.exposeHeaders.length ? { ExposeHeaders: r.exposeHeaders } : {}),
              ...(r.maxAgeSeconds !== undefined ? { MaxAgeSeconds: r.maxAgeSeconds } : {}),
            })),
          },
        }),
      ),
    );
  }

  /**
   * How many object versions and delete markers the bucket holds, counted up to
   * `limit` (one listing page): `more` is true when there are more than counted.
   */
  async countObjectVersions(
    bucket: string,
    limit = 1000,
  ): Promise<{ count: number; more: boolean }> {
    const out = await this.call("ListObjectVersions", bucket, () =>
      this.s3.send(new ListObjectVersionsCommand({ Bucket: bucket, MaxKeys: limit })),
    );
    const count = (out.Versions?.length ?? 0) + (out.DeleteMarkers?.length ?? 0);
    return { count, more: Boolean(out.IsTruncated) };
  }

  /**
   * Deletes every object version and delete marker of the bucket (so that it can be
   * deleted), a page of up to 1000 at a time. Resolves with the number deleted.
   */
  async deleteAllVersions(bucket: string): Promise<number> {
    let deleted = 0;
    for (;;) {
      const page = await this.call("ListObjectVersions", bucket, () =>
        this.s3.send(new ListObjectVersionsCommand({ Bucket: bucket, MaxKeys: 1000 })),
      );
      const ids = [...(page.Versions ?? []), ...(page.DeleteMarkers ?? [])].map((v) => ({
        Key: v.Key ?? "",
        ...(v.VersionId ? { VersionId: v.VersionId } : {}),
      }));
      if (ids.length === 0) return deleted;
      const out = await this.call(
        "DeleteObjects",
        bucket,
        () =>
          this.s3.send(
            new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: ids, Quiet: true } }),
          ),
        true,
      );
      const failed = out.Errors ?? [];
      if (failed.length > 0) {
        const first = failed[0];
        throw objectStorageError("DeleteObjects", bucket, {
          name: first?.Code ?? "DeleteFailed",
          Code: first?.Code,
          message: `${failed.length} of ${ids.length} versions not deleted (${first?.Code}: ${first?.Message})`,
          $metadata: { httpStatusCode: 500 },
        });
      }
      deleted += ids.length;
    }
  }
}

/**
 * Where an account's object storage is and how to read its key pair (the shape a
 * connection declares; see controllers/connections/registry.ts).
 */
export interface ObjectStorageSettings {
  endpoint: string;
  region?: string;
  credentials(): Promise<S3Credentials>;
}

/**
 * The object storage an object uses (its connection's), or undefined when its
 * connection has none configured.
 */
export type ObjectStorageResolver = (obj: {
  metadata?: { namespace?: string; name?: string };
}) => Promise<ObjectStorageClient | undefined>;
