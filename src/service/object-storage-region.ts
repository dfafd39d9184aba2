/**
 * An object storage answering in another region than the one requests are signed for
 * (the connection's objectStorage.region): MinIO with MINIO_REGION, a bucket of AWS in
 * another region. The answer names its region in the header `x-amz-bucket-region`
 * (a HEAD's 400 or 301 has no body; versitygw sends none, object-storage-head.ts) or
 * in AuthorizationHeaderMalformed's Region element, else its message (quoted '...' by
 * S3 and MinIO, "..." by versitygw; Garage's names the scope it expected).
 */
import { ServiceRefusedError } from "./errors.js";

/**
 * Requests are signed for another region than the object storage's: terminal, but
 * external (a change of the connection's region fixes it, not one of the object).
 */
export class ObjectStorageRegionError extends ServiceRefusedError {
  /** Condition reason. */
  readonly reason = "S3RegionMismatch";
  /** The hold lies with the connection's settings, not the object. */
  readonly external = true;
}

interface AnsweredError {
  /** The region the refused request was signed for ({@link signedFor}). */
  $signedRegion?: string;
  Code?: string;
  message?: string;
  /** The error's Region element (S3, versitygw and Garage send it). */
  Region?: string;
  $response?: { headers?: Record<string, string | undefined> };
}

/** The region a refusal `err` (HTTP `status`, S3 `code`) says the storage is in, if it says one. */
export function answeredRegion(err: unknown, status: number, code?: string): string | undefined {
  const e = err as AnsweredError | undefined;
  const header = e?.$response?.headers?.["x-amz-bucket-region"];
  // A 400 for another cause (an invalid name, say) names the bucket's region too.
  if (header && header !== e?.$signedRegion && (status === 301 || status === 400)) return header;
  if (code !== "AuthorizationHeaderMalformed" && code !== "PermanentRedirect") return undefined;
  return e?.Region || (/expecting ['"]([^'"]+)['"]/.exec(e?.message ?? "")?.[1] ?? header);
}

/** The refusal of `what` signed for another region than `region`, the storage's. */
export function regionError(
  what: string,
  region: string,
  details: ConstructorParameters<typeof ServiceRefusedError>[1],
): ObjectStorageRegionError {
  return new ObjectStorageRegionError(
    `${what}: the object storage answered for region ${region}, not the one the requests are signed for: set the connection's object storage region to ${region} (operator config objectStorage.region, or the ServiceConnection's spec.objectStorage.region)`,
    details,
  );
}

/** `err`, a refusal of a request signed for `region`, marked with it for {@link answeredRegion}. */
export function signedFor(err: unknown, region: string): unknown {
  if (err && typeof err === "object") Object.assign(err, { $signedRegion: region });
  return err;
}
