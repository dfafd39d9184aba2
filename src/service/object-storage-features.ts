/**
 * A bucket's features through the S3 API (the object storage client's part,
 * object-storage.ts): versioning, lifecycle rules, policy, tags and CORS rules, each
 * read and written in its canonical shape (object-storage-types.ts, converted by
 * object-storage-rules.ts); putting an empty one removes it.
 */
import {
  DeleteBucketCorsCommand,
  DeleteBucketLifecycleCommand,
  DeleteBucketPolicyCommand,
  DeleteBucketTaggingCommand,
  GetBucketCorsCommand,
  GetBucketLifecycleConfigurationCommand,
  GetBucketPolicyCommand,
  GetBucketTaggingCommand,
  GetBucketVersioningCommand,
  GetObjectLegalHoldCommand,
  GetObjectRetentionCommand,
  PutBucketCorsCommand,
  PutBucketLifecycleConfigurationCommand,
  PutBucketPolicyCommand,
  PutBucketTaggingCommand,
  PutBucketVersioningCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import {
  callS3,
  ObjectStorageNotImplementedError,
  objectStorageError,
  s3ErrorCode,
} from "./object-storage-errors.js";
import type { UndeletedVersion, VersionLock } from "./object-storage-lock.js";
import {
  corsRuleOf,
  lifecycleRuleOf,
  s3CorsRule,
  s3LifecycleRule,
} from "./object-storage-rules.js";
import type { CorsRule, LifecycleRule, VersioningState } from "./object-storage-types.js";

/** The features of the buckets `s3` reaches. */
export class BucketFeatures {
  constructor(private readonly s3: S3Client) {}

  async getVersioning(bucket: string): Promise<VersioningState> {
    const out = await callS3("GetBucketVersioning", bucket, () =>
      this.s3.send(new GetBucketVersioningCommand({ Bucket: bucket })),
    );
    return out.Status === "Enabled" || out.Status === "Suspended" ? out.Status : "Off";
  }

  async putVersioning(bucket: string, state: "Enabled" | "Suspended"): Promise<void> {
    await callS3("PutBucketVersioning", bucket, () =>
      this.s3.send(
        new PutBucketVersioningCommand({
          Bucket: bucket,
          VersioningConfiguration: { Status: state },
        }),
      ),
    );
  }

  async getLifecycle(bucket: string): Promise<LifecycleRule[]> {
    const out = await readS3Feature(
      "GetBucketLifecycleConfiguration",
      bucket,
      () => this.s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket })),
      { Rules: [], $metadata: {} },
    );
    return (out.Rules ?? []).map(lifecycleRuleOf);
  }

  /** Replaces the lifecycle configuration; an empty list removes it. */
  async putLifecycle(bucket: string, rules: readonly LifecycleRule[]): Promise<void> {
    if (rules.length === 0) {
      await callS3("DeleteBucketLifecycle", bucket, () =>
        this.s3.send(new DeleteBucketLifecycleCommand({ Bucket: bucket })),
      );
      return;
    }
    await callS3("PutBucketLifecycleConfiguration", bucket, () =>
      this.s3.send(
        new PutBucketLifecycleConfigurationCommand({
          Bucket: bucket,
          LifecycleConfiguration: {
            Rules: rules.map(s3LifecycleRule),
          },
        }),
      ),
    );
  }

  /** The bucket policy (JSON text), or undefined when the bucket has none. */
  async getPolicy(bucket: string): Promise<string | undefined> {
    const out = await readS3Feature(
      "GetBucketPolicy",
      bucket,
      () => this.s3.send(new GetBucketPolicyCommand({ Bucket: bucket })),
      { Policy: undefined, $metadata: {} },
    );
    const policy = out.Policy || undefined;
    if (policy !== undefined && !policy.trimStart().startsWith("{")) {
      // gofakes3 answers a GET of a feature it lacks with the bucket's object list.
      throw new ObjectStorageNotImplementedError(
        `S3 GetBucketPolicy of bucket ${bucket}: the answer is no JSON policy but ${JSON.stringify(policy.slice(0, 60))}…: the object storage does not implement it`,
        { code: out.$metadata.httpStatusCode, endpoint: "s3:GetBucketPolicy" },
      );
    }
    return policy;
  }

  /** Sets the bucket policy; undefined removes it. */
  async putPolicy(bucket: string, policy: string | undefined): Promise<void> {
    if (policy === undefined) {
      await callS3("DeleteBucketPolicy", bucket, () =>
        this.s3.send(new DeleteBucketPolicyCommand({ Bucket: bucket })),
      );
      return;
    }
    await callS3("PutBucketPolicy", bucket, () =>
      this.s3.send(new PutBucketPolicyCommand({ Bucket: bucket, Policy: policy })),
    );
  }

  async getTags(bucket: string): Promise<Record<string, string>> {
    const out = await readS3Feature(
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
      await callS3("DeleteBucketTagging", bucket, () =>
        this.s3.send(new DeleteBucketTaggingCommand({ Bucket: bucket })),
      );
      return;
    }
    await callS3("PutBucketTagging", bucket, () =>
      this.s3.send(new PutBucketTaggingCommand({ Bucket: bucket, Tagging: { TagSet: set } })),
    );
  }

  async getCors(bucket: string): Promise<CorsRule[]> {
    const out = await readS3Feature(
      "GetBucketCors",
      bucket,
      () => this.s3.send(new GetBucketCorsCommand({ Bucket: bucket })),
      { CORSRules: [], $metadata: {} },
    );
    return (out.CORSRules ?? []).map(corsRuleOf);
  }

  /** Replaces the CORS configuration; an empty list removes it. */
  async putCors(bucket: string, rules: readonly CorsRule[]): Promise<void> {
    if (rules.length === 0) {
      await callS3("DeleteBucketCors", bucket, () =>
        this.s3.send(new DeleteBucketCorsCommand({ Bucket: bucket })),
      );
      return;
    }
    await callS3("PutBucketCors", bucket, () =>
      this.s3.send(
        new PutBucketCorsCommand({
          Bucket: bucket,
          CORSConfiguration: {
            CORSRules: rules.map(s3CorsRule),
          },
        }),
      ),
    );
  }

  /** What locks each of `versions` (its object lock: retention, legal hold); a refused
   * read (no lock configured, no permission) tells nothing. */
  async versionLocks(
    bucket: string,
    versions: readonly UndeletedVersion[],
  ): Promise<VersionLock[]> {
    const read = <T>(run: () => Promise<T>) => run().catch(() => undefined);
    return Promise.all(
      versions.map(async ({ key, versionId }) => {
        const at = { Bucket: bucket, Key: key, ...(versionId ? { VersionId: versionId } : {}) };
        const [retention, hold] = await Promise.all([
          read(() => this.s3.send(new GetObjectRetentionCommand(at))),
          read(() => this.s3.send(new GetObjectLegalHoldCommand(at))),
        ]);
        const { Mode, RetainUntilDate } = retention?.Retention ?? {};
        return {
          key,
          ...(versionId ? { versionId } : {}),
          ...(Mode ? { mode: Mode } : {}),
          ...(RetainUntilDate ? { retainUntil: new Date(RetainUntilDate) } : {}),
          ...(hold?.LegalHold?.Status === "ON" ? { legalHold: true } : {}),
        };
      }),
    );
  }
}

/** The S3 codes of a bucket feature that is not configured. */
const NOT_CONFIGURED = new Set([
  "NoSuchLifecycleConfiguration",
  "NoSuchBucketPolicy",
  "NoSuchTagSet",
  "NoSuchCORSConfiguration",
  "NoSuchTagSetError",
]);

/** Reads a bucket feature, answering `empty` when the bucket has none of it configured. */
async function readS3Feature<T>(
  operation: string,
  bucket: string,
  run: () => Promise<T>,
  empty: T,
): Promise<T> {
  try {
    return await run();
  } catch (err) {
    const code = s3ErrorCode(err);
    if (code && NOT_CONFIGURED.has(code)) return empty;
    throw objectStorageError(operation, bucket, err);
  }
}
