import { BUCKET_NAME_PATTERN } from "../../crds/bucket-s3.js";
import { ServiceInvalidIdError } from "../../service/errors.js";

/** The S3 naming rule `name` breaks, or undefined when it keeps them all. */
function brokenRule(name: string): string | undefined {
  if (!BUCKET_NAME_PATTERN.test(name)) {
    return "must be 3 to 63 lower-case letters, digits, dots and hyphens, beginning and ending with a letter or digit";
  }
  if (name.includes("..")) return "must not contain two adjacent periods";
  if (/^\d+\.\d+\.\d+\.\d+$/.test(name)) return "must not be formatted as an IP address";
  if (name.startsWith("xn--") || name.startsWith("sthree-")) {
    return "must not begin with xn-- or sthree-";
  }
  if (name.endsWith("-s3alias") || name.endsWith("--ol-s3")) {
    return "must not end with -s3alias or --ol-s3";
  }
  return undefined;
}

/**
 * Why `name` breaks S3's bucket naming rules, or undefined when it keeps them. The CRD
 * checks spec.name at apply time; this checks metadata.name, the bucket name when
 * spec.name is omitted, which a CEL rule on the spec cannot see.
 */
export function bucketNameProblem(name: string): string | undefined {
  const rule = brokenRule(name);
  return rule
    ? `the bucket name ${JSON.stringify(name)} (metadata.name, as spec.name is omitted) ${rule} (S3 naming rules); set spec.name`
    : undefined;
}

/**
 * Throws `InvalidRemoteId` (nothing sent) for a bound bucket name that breaks S3's
 * naming rules: the annotation aidc.io/external-id, set by hand, is no bucket name.
 */
export function refuseUnusableBoundName(name: string): void {
  const rule = brokenRule(name);
  if (!rule) return;
  throw new ServiceInvalidIdError(
    `the bucket name ${JSON.stringify(name.slice(0, 80))} of the annotation aidc.io/external-id ${rule} (S3 naming rules); nothing was sent: correct or remove the annotation`,
    { endpoint: "s3:HeadBucket" },
  );
}
