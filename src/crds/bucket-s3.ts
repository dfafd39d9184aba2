/**
 * The S3 parts of a Bucket's spec (bucket.ts): the bucket naming rules, the tag keys
 * the operator keeps, and the schemas of lifecycle and CORS rules.
 */
import { z } from "zod";
import { described, withRules } from "./definition.js";

/**
 * S3's bucket naming rules (general purpose buckets): 3 to 63 lower-case letters,
 * digits, dots and hyphens, beginning and ending with a letter or digit. The CEL rules
 * of {@link bucketNameRules} add the rest (no `..`, not an IP address, reserved
 * prefixes and suffixes).
 */
export const BUCKET_NAME_PATTERN = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** The tag key prefix the operator keeps for itself (the owner mark). */
export const RESERVED_TAG_PREFIX = "aidc.io/";

/** The CEL rules on the spec that complete {@link BUCKET_NAME_PATTERN}, each naming the field. */
export const bucketNameRules = [
  {
    rule: "!has(self.name) || !self.name.contains('..')",
    message: "spec.name: a bucket name must not contain two adjacent periods (S3 naming rules)",
    fieldPath: ".name",
  },
  {
    rule: "!has(self.name) || !self.name.matches('^[0-9]+\\\\.[0-9]+\\\\.[0-9]+\\\\.[0-9]+$')",
    message: "spec.name: a bucket name must not be formatted as an IP address (S3 naming rules)",
    fieldPath: ".name",
  },
  {
    rule: "!has(self.name) || !(self.name.startsWith('xn--') || self.name.startsWith('sthree-'))",
    message: "spec.name: a bucket name must not begin with xn-- or sthree- (prefixes S3 reserves)",
    fieldPath: ".name",
  },
  {
    rule: "!has(self.name) || !(self.name.endsWith('-s3alias') || self.name.endsWith('--ol-s3'))",
    message:
      "spec.name: a bucket name must not end with -s3alias or --ol-s3 (suffixes S3 reserves)",
    fieldPath: ".name",
  },
  {
    rule: "!has(self.tags) || self.tags.all(k, !k.startsWith('aidc.io/') && !k.startsWith('aws:'))",
    message:
      "spec.tags: keys beginning with aidc.io/ (the operator's owner mark) or aws: (reserved by S3) cannot be set",
    fieldPath: ".tags",
  },
];

/** One lifecycle rule: expiration of objects and of noncurrent versions under a prefix. */
export const lifecycleRuleSchema = withRules(
  z
    .object({
      id: described(z.string().min(1).max(255), "Id of the rule, unique in the bucket."),
      prefix: described(
        z.string().max(1024),
        "Key prefix the rule applies to; every object when empty.",
      ).default(""),
      enabled: described(z.boolean(), "Whether the rule is in force (default true).").default(true),
      expirationDays: described(
        z.number().int().min(1).max(36_500),
        "Days after creation at which current object versions expire (1 to 36500).",
      ).optional(),
      noncurrentVersionExpirationDays: described(
        z.number().int().min(1).max(36_500),
        "Days after becoming noncurrent at which old versions are removed (1 to 36500; needs versioning).",
      ).optional(),
    })
    .meta({ description: "A lifecycle rule of the bucket." }),
  {
    rule: "has(self.expirationDays) || has(self.noncurrentVersionExpirationDays)",
    message:
      "spec.lifecycleRules[]: a rule needs expirationDays or noncurrentVersionExpirationDays",
  },
);

const headerList = (description: string) =>
  described(z.array(z.string().min(1).max(256)).max(64), description).default([]);

/** One CORS rule of the bucket. */
export const corsRuleSchema = z
  .object({
    allowedOrigins: described(
      z.array(z.string().min(1).max(256)).min(1).max(64),
      "Origins allowed to make cross-origin requests (e.g. https://app.example.com, or *).",
    ),
    allowedMethods: described(
      z
        .array(z.enum(["GET", "PUT", "POST", "DELETE", "HEAD"]))
        .min(1)
        .max(5),
      "HTTP methods allowed from those origins.",
    ),
    allowedHeaders: headerList("Headers a preflight request may ask for."),
    exposeHeaders: headerList("Response headers the browser may expose."),
    maxAgeSeconds: described(
      z.number().int().min(0).max(86_400),
      "How long a browser may cache the preflight answer, in seconds (0 to 86400).",
    ).optional(),
  })
  .meta({ description: "A CORS rule of the bucket." });
