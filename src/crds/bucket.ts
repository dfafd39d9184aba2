import { z } from "zod";
import {
  BUCKET_NAME_PATTERN,
  bucketNameRules,
  corsRuleSchema,
  lifecycleRuleSchema,
} from "./bucket-s3.js";
import { kindColumns, statusColumn } from "./columns.js";
import { timestamp } from "./conditions.js";
import {
  type CrdDefinition,
  type CustomResource,
  described,
  type FieldRule,
  GROUP,
  VERSION,
  withRules,
} from "./definition.js";
import { exportTo, managedSpecShape } from "./fields.js";
import { CONNECTION_REF_RULE, mutabilityRules } from "./mutability.js";
import { ownReason, ownReasons, readEveryPoll } from "./reasons/own.js";
import { exportStatusShape, kindStatus, managedStatusShape } from "./status-fields.js";

/** The Bucket spec fields that may not change freely (see mutability.ts). */
export const BUCKET_MUTABILITY: readonly FieldRule[] = [
  {
    field: "name",
    mutability: "immutable",
    owner: "service",
    why: "a bucket cannot be renamed; create a new Bucket (and copy the objects) for another name",
  },
  CONNECTION_REF_RULE,
];

/** The condition reasons only Bucket writes (reasons.ts has the shared ones). */
export const BUCKET_REASONS = ownReasons({
  BucketNameTaken: ownReason(
    "Terminal",
    ["Ready", "Synced"],
    "A bucket of this name exists in another account of the object storage (bucket names are global): the create answered BucketAlreadyExists, a HEAD answered 200 (as S3 does for another account's bucket that grants this one a read) for a bucket the account's list lacks, or a HEAD answered 403 for a bucket the account does not list (or cannot: credentials scoped to other buckets), which credentials lacking s3:ListBucket meet too (the message names both); nothing is created.",
    "Choose another spec.name, or grant the credentials s3:ListBucket; a 403 is looked at again every poll.",
  ),
  BucketExistsNotAdopted: ownReason(
    "Terminal",
    ["Ready", "Synced"],
    "A bucket of this name exists already in the account, and spec.adopt is not true: it is not taken over silently, since the name may belong to another team.",
    "Set spec.adopt: true to manage it (the namespace must also be allowed to adopt), or choose another spec.name.",
  ),
  InvalidBucketName: ownReason(
    "Terminal",
    ["Ready", "Synced"],
    "metadata.name, the bucket name when spec.name is omitted, breaks S3's naming rules (the message says which); nothing is created.",
    "Set spec.name.",
  ),
  InvalidBucketPolicy: ownReason(
    "Terminal",
    ["Synced"],
    "spec.policy is not a JSON object, or the object storage refused it (the message says why).",
    "Correct spec.policy.",
  ),
  FeatureNotImplemented: ownReason(
    "Terminal",
    ["Synced"],
    "The object storage answers NotImplemented for a feature the spec sets (the message names it, e.g. CORS); the other features are applied. A write so answered is not sent again until the spec changes or an hour has passed.",
    "Remove the field, or use an object storage that implements it.",
  ),
  FieldNotKept: ownReason(
    "Terminal",
    ["Synced"],
    "The object storage accepted the write of a spec field but answers, at the next poll, as before it (Garage drops a lifecycle rule's noncurrentVersionExpirationDays): the message names the field. The write is not sent again until the spec changes or an hour has passed, so no DriftCorrected is recorded for it; the other features are applied, Ready stays True.",
    "Remove the field from the spec (it has no effect on this server), or use an object storage that keeps it.",
  ),
  S3CredentialsRefused: ownReason(
    "Terminal",
    ["Ready", "Synced"],
    "The object storage refused the S3 credentials (InvalidAccessKeyId, SignatureDoesNotMatch, a session token expired, revoked or missing); the message names where they come from (the Secret, the mounted files).",
    "Fix the credentials Secret (temporary credentials: write fresh ones there): the operator retries on a slow backoff and uses rotated credentials at once.",
  ),
  S3AccessDenied: ownReason(
    "Terminal",
    ["Ready", "Synced"],
    "The object storage answered AccessDenied: the S3 credentials lack a permission the operator uses on the bucket (the message names the action, e.g. s3:GetBucketPolicy).",
    "Grant the action in the policy of the S3 credentials (and check that no bucket policy denies it): the operator retries on a slow backoff.",
  ),
  S3RegionMismatch: ownReason(
    "Terminal",
    ["Ready", "Synced"],
    "The object storage answers for another region than the one the S3 requests are signed for (MinIO's MINIO_REGION, a bucket in another AWS region); the message names its region.",
    "Set the connection's object storage region to it (objectStorage.region, or the ServiceConnection's spec.objectStorage.region): retried on a slow backoff.",
  ),
  ObjectStorageNotConfigured: ownReason(
    "Terminal",
    ["Ready", "Synced"],
    "The object's connection has no object storage endpoint or S3 credentials (spec.objectStorage of its ServiceConnection, or objectStorage in the operator configuration for the default connection).",
    "Configure them; retried on a slow backoff.",
  ),
  CredentialsExportNotAllowed: ownReason(
    "Terminal",
    ["Synced"],
    "spec.exportTo.secretName is set, but the S3 key pair may not be exported: the operator's objectStorage.exportCredentials (chart value objectStorage.exportCredentials) is off, or the object's ServiceConnection does not allow it (spec.objectStorage.exportCredentials); the message names the setting. No Secret is written (one written before is deleted when the connection stops allowing it); the bucket and the ConfigMap of spec.exportTo are kept as usual.",
    "Turn the setting on, or remove spec.exportTo.secretName.",
  ),
  BucketNotEmpty: readEveryPoll(
    ownReason(
      "Terminal",
      ["Ready"],
      "deletionPolicy is Delete but the bucket still holds objects (the message gives the count, versions and delete markers included): it is not deleted, and the object waits.",
      "Empty the bucket, set spec.forceDestroy: true to delete every version, or set deletionPolicy: Orphan; checked again every poll.",
    ),
  ),
  BucketObjectLocked: readEveryPoll(
    ownReason(
      "Terminal",
      ["Ready"],
      "deletionPolicy is Delete with spec.forceDestroy, but object lock keeps versions of the bucket (the message names a few: their retention mode and end, or a legal hold); the others are deleted, the bucket is not, and the object waits. The operator never bypasses GOVERNANCE retention nor lifts a legal hold: that is the data's owner's decision.",
      "Lift the legal holds, shorten or remove GOVERNANCE retention yourself (with s3:BypassGovernanceRetention), wait until the retention ends, or set deletionPolicy: Orphan; checked again every poll, and when the earliest retention named ends.",
    ),
  ),
});

/** Desired state of a Bucket: one bucket of the service's S3-compatible object storage. */
export const BucketSpec = withRules(
  z
    .object({
      name: described(
        z.string().min(3).max(63).regex(BUCKET_NAME_PATTERN),
        "Name of the bucket in the object storage; metadata.name when omitted. 3 to 63 lower-case letters, digits, dots and hyphens, beginning and ending with a letter or digit (S3 naming rules). Immutable.",
      ).optional(),
      adopt: described(
        z.boolean(),
        "Manage a bucket of this name that exists already in the account (default false: an existing bucket is refused with BucketExistsNotAdopted, since a bucket name can belong to another team). Adoption also needs the namespace in the operator's adoption.namespaces.",
      ).default(false),
      versioning: described(
        z.enum(["Enabled", "Suspended"]),
        "Object versioning: Enabled, or Suspended (a versioned bucket can never return to unversioned). Left as it is when omitted.",
      ).optional(),
      lifecycleRules: described(
        z.array(lifecycleRuleSchema).max(1000),
        "Lifecycle rules: expiration of objects and of noncurrent versions by prefix. The bucket's rules are replaced by these; an empty list removes them; left as they are when omitted.",
      ).optional(),
      policy: described(
        z.string().max(20_480),
        "The bucket policy, a JSON document (as S3's PutBucketPolicy takes it). Compared by meaning, not by text. An empty string removes it; left as it is when omitted (removing the field does not remove the bucket's policy).",
      ).optional(),
      tags: described(
        z.record(z.string().min(1).max(128), z.string().max(256)),
        "Tags of the bucket (at most 49: the operator keeps one, aidc.io/owner, for its owner mark).",
      )
        .meta({ maxProperties: 49 })
        .optional(),
      cors: described(
        z.array(corsRuleSchema).max(100),
        "CORS rules of the bucket; an empty list removes them; left as they are when omitted.",
      ).optional(),
      forceDestroy: described(
        z.boolean(),
        "With deletionPolicy Delete: delete every object version and delete marker, then the bucket. Versions under object lock (retention or a legal hold) are never bypassed: the deletion waits for them with the condition BucketObjectLocked. Default false: a bucket that holds objects is not deleted, and the object stays with the condition BucketNotEmpty.",
      ).default(false),
      exportTo: exportTo(
        "BUCKET_NAME, BUCKET_ENDPOINT (path-style URL) and BUCKET_REGION in the ConfigMap; the connection's S3 key pair only in the Secret",
        "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (the S3 key pair of the connection's object storage)",
      ).optional(),
      ...managedSpecShape,
    })
    .meta({
      description:
        "Desired bucket. Every field but name and connectionRef may change; the operator puts back what is changed outside the cluster.",
    }),
  ...bucketNameRules,
  ...mutabilityRules(BUCKET_MUTABILITY),
);
/** Desired state of a Bucket, with the CRD's defaults applied. */
export type BucketSpec = z.infer<typeof BucketSpec>;

/** What one reconcile changed in the bucket. */
export const bucketAppliedSchema = z
  .object({
    time: timestamp("When the changes were made."),
    changes: described(
      z.array(z.string()),
      "What was changed, one entry per feature (e.g. versioning Enabled, lifecycle rules (2)).",
    ),
    drift: described(
      z.boolean(),
      "True when the changes put back what was changed outside the cluster.",
    ),
  })
  .meta({ description: "The last changes the operator made to the bucket." });

/** Observed state of a Bucket. */
export const BucketStatus = kindStatus("the bucket", {
  ...managedStatusShape,
  bucketName: described(z.string(), "Name of the bucket in the object storage.").optional(),
  endpoint: described(z.string(), "Path-style URL of the bucket.").optional(),
  region: described(z.string(), "Region the bucket's requests are signed for.").optional(),
  creationTime: timestamp("When the object storage created the bucket.").optional(),
  versioning: described(
    z.enum(["Off", "Enabled", "Suspended"]),
    "Versioning state: Off (never enabled), Enabled or Suspended.",
  ).optional(),
  lifecycleRules: described(z.number().int(), "Number of lifecycle rules.").optional(),
  policy: described(z.boolean(), "Whether the bucket has a policy.").optional(),
  tags: described(z.number().int(), "Number of tags (the owner mark included).").optional(),
  corsRules: described(z.number().int(), "Number of CORS rules.").optional(),
  unsupported: described(
    z.array(z.string()),
    "Features the object storage answers NotImplemented for.",
  ).optional(),
  lastApplied: bucketAppliedSchema.optional(),
  ...exportStatusShape,
  exportedSecretName: described(
    z.string(),
    "Secret of spec.exportTo.secretName as last reconciled while the operator's objectStorage.exportCredentials is on (the S3 key pair is written there while the connection allows it); when that name changes or is removed, the operator deletes the Secret it wrote under this one (never one it does not own) before recording the new name.",
  ).optional(),
});
/** Observed state of a Bucket. */
export type BucketStatus = z.infer<typeof BucketStatus>;

/** A whole Bucket object. */
export type Bucket = CustomResource<BucketSpec, BucketStatus>;

/** The Bucket kind (`bucket`). */
export const bucketCrd: CrdDefinition<typeof BucketSpec, typeof BucketStatus> = {
  group: GROUP,
  version: VERSION,
  kind: "Bucket",
  namespaced: true,
  plural: "buckets",
  singular: "bucket",
  shortNames: ["bkt"],
  categories: ["aidc"],
  description:
    "A bucket of the service's S3-compatible object storage: created (or adopted when spec.adopt is true), its versioning, lifecycle rules, policy, tags and CORS kept as the spec says (changes made outside the cluster are put back), deleted only when empty unless forceDestroy.",
  spec: BucketSpec,
  status: BucketStatus,
  remote: "managed",
  mutability: BUCKET_MUTABILITY,
  reasons: BUCKET_REASONS,
  sharedReasons: ["Available"],
  printerColumns: kindColumns({
    shown: [
      statusColumn("Bucket", "string", "bucketName", "Name of the bucket."),
      statusColumn("Versioning", "string", "versioning", "Versioning state."),
    ],
    readyMeaning: "Whether the bucket exists and matches the spec",
    wide: [statusColumn("Endpoint", "string", "endpoint", "URL of the bucket.")],
  }),
};
