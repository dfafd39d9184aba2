/**
 * The lifecycle and CORS rules of a bucket between their canonical shapes
 * (object-storage-types.ts) and the S3 API's.
 */
import type { CORSRule, LifecycleRule as S3LifecycleRule } from "@aws-sdk/client-s3";
import type { CorsRule, LifecycleRule } from "./object-storage-types.js";

/** A lifecycle rule as S3 answers it, in the canonical shape. */
export function lifecycleRuleOf(r: S3LifecycleRule): LifecycleRule {
  return {
    id: r.ID ?? "",
    prefix: r.Filter?.Prefix ?? r.Filter?.And?.Prefix ?? r.Prefix ?? "",
    enabled: r.Status === "Enabled",
    ...(r.Expiration?.Days ? { expirationDays: r.Expiration.Days } : {}),
    ...(r.NoncurrentVersionExpiration?.NoncurrentDays
      ? { noncurrentVersionExpirationDays: r.NoncurrentVersionExpiration.NoncurrentDays }
      : {}),
  };
}

/** A canonical lifecycle rule as S3 takes it. */
export function s3LifecycleRule(r: LifecycleRule): S3LifecycleRule {
  return {
    ID: r.id,
    Filter: { Prefix: r.prefix },
    Status: r.enabled ? "Enabled" : "Disabled",
    ...(r.expirationDays ? { Expiration: { Days: r.expirationDays } } : {}),
    ...(r.noncurrentVersionExpirationDays
      ? { NoncurrentVersionExpiration: { NoncurrentDays: r.noncurrentVersionExpirationDays } }
      : {}),
  };
}

/** A CORS rule as S3 answers it, in the canonical shape. */
export function corsRuleOf(r: CORSRule): CorsRule {
  return {
    allowedOrigins: r.AllowedOrigins ?? [],
    allowedMethods: r.AllowedMethods ?? [],
    allowedHeaders: r.AllowedHeaders ?? [],
    exposeHeaders: r.ExposeHeaders ?? [],
    ...(r.MaxAgeSeconds !== undefined ? { maxAgeSeconds: r.MaxAgeSeconds } : {}),
  };
}

/** A canonical CORS rule as S3 takes it. */
export function s3CorsRule(r: CorsRule): CORSRule {
  return {
    AllowedOrigins: r.allowedOrigins,
    AllowedMethods: r.allowedMethods,
    ...(r.allowedHeaders.length ? { AllowedHeaders: r.allowedHeaders } : {}),
    ...(r.exposeHeaders.length ? { ExposeHeaders: r.exposeHeaders } : {}),
    ...(r.maxAgeSeconds !== undefined ? { MaxAgeSeconds: r.maxAgeSeconds } : {}),
  };
}
