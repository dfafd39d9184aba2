import { z } from "zod";

const ms = z.number().int().positive();

/**
 * The object storage of the default connection (the Bucket kind): the S3 endpoint
 * (`{object_storage_url}`) and where the S3 key pair comes from. A ServiceConnection's
 * `spec.objectStorage` takes its place for the objects that use one.
 */
export const objectStorageSchema = z
  .strictObject({
    /** The S3 endpoint. Unset: Buckets of the default connection get ObjectStorageNotConfigured. */
    endpoint: z.url({ protocol: /^https?$/ }).optional(),
    /** The region requests are signed for. */
    region: z.string().min(1).default("us-east-1"),
    /** Allows an `http://` endpoint (a local S3 server, the playground and tests only). */
    allowInsecureHttp: z.boolean().default(false),
    /**
     * Directory of the mounted S3 credentials Secret: files `accessKeyId` and
     * `secretAccessKey`, read again every `credentialsRefreshMs`, so a rotated Secret
     * takes effect without a restart. `AIDC_S3_ACCESS_KEY_ID` and
     * `AIDC_S3_SECRET_ACCESS_KEY` (environment) are the alternative.
     */
    credentialsDir: z.string().min(1).optional(),
    credentialsRefreshMs: ms.default(10_000),
    /** Timeout of one S3 request. */
    timeoutMs: ms.default(10_000),
  })
  .superRefine((s, ctx) => {
    if (s.endpoint?.startsWith("http://") && !s.allowInsecureHttp) {
      ctx.addIssue({
        code: "custom",
        path: ["endpoint"],
        message: `${s.endpoint} is plain http, which would send signed requests and data unencrypted: use an https:// URL, or set objectStorage.allowInsecureHttp: true (a local S3 server only)`,
      });
    }
  });
