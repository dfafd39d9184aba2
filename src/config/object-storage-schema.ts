import { z } from "zod";
import { urlCarriesCredentials } from "./service-schema.js";

const ms = z.number().int().positive();

/**
 * The object storage of the default connection (the Bucket kind): the S3 endpoint
 * (`{object_storage_url}`) and where the S3 key pair comes from. A ServiceConnection's
 * `spec.objectStorage` takes its place for the objects that use one. Each field's
 * `.describe()` text is its entry in docs/configuration.md.
 */
export const objectStorageSchema = z
  .strictObject({
    endpoint: z
      .url({ protocol: /^https?$/ })
      .optional()
      .describe(
        "The S3 endpoint (`{object_storage_url}`). Unset: Buckets of the default connection are held with `ObjectStorageNotConfigured`.",
      ),
    region: z
      .string()
      .min(1)
      .default("us-east-1")
      .describe("The region S3 requests are signed for."),
    allowInsecureHttp: z
      .boolean()
      .default(false)
      .describe("Allow an `http://` endpoint (a local S3 server, the playground and tests only)."),
    credentialsDir: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Directory of the mounted S3 credentials Secret: files `accessKeyId` and `secretAccessKey`, and `sessionToken` when the credentials are temporary (STS), read again every `credentialsRefreshMs`, so a rotated Secret takes effect without a restart. `AIDC_S3_ACCESS_KEY_ID`, `AIDC_S3_SECRET_ACCESS_KEY` and `AIDC_S3_SESSION_TOKEN` (environment) win.",
      ),
    credentialsRefreshMs: ms
      .default(10_000)
      .describe("How often the credentials files are read again."),
    timeoutMs: ms.default(10_000).describe("Timeout of one S3 request."),
    exportCredentials: z
      .boolean()
      .default(false)
      .describe(
        "Let Buckets write their connection's S3 key pair into the Secret of `spec.exportTo.secretName` (in the Bucket's namespace): the operator then writes Secrets in the watched namespaces, which the chart value `objectStorage.exportCredentials` grants (get, create, patch, delete) and sets this with. A Bucket of a ServiceConnection also needs the connection's `spec.objectStorage.exportCredentials`; of the default connection, this alone. Off (the default): the operator has no access to Secrets there, and a Bucket that asks reads Synced=False `CredentialsExportNotAllowed`.",
      ),
  })
  .superRefine((s, ctx) => {
    if (urlCarriesCredentials(s.endpoint)) {
      ctx.addIssue({
        code: "custom",
        path: ["endpoint"],
        message:
          "must not carry a user or password (user:password@host): logs and messages show this URL; the S3 key pair goes in objectStorage.credentialsDir (or AIDC_S3_ACCESS_KEY_ID and AIDC_S3_SECRET_ACCESS_KEY)",
      });
    } else if (s.endpoint?.startsWith("http://") && !s.allowInsecureHttp) {
      ctx.addIssue({
        code: "custom",
        path: ["endpoint"],
        message: `${s.endpoint} is plain http, which would send signed requests and data unencrypted: use an https:// URL, or set objectStorage.allowInsecureHttp: true (a local S3 server only)`,
      });
    }
  });
