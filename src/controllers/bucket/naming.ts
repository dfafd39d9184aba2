import { BUCKET_NAME_PATTERN } from "../../crds/bucket-s3.js";

/**
 * Why `name` breaks S3's bucket naming rules, or undefined when it keeps them. The CRD
 * checks spec.name at apply time; this checks metadata.name, the bucket name when
 * spec.name is omitted, which a CEL rule on the spec cannot see.
 */
export function bucketNameProblem(name: string): string | undefined {
  const why = (rule: string) =>
    `the bucket name ${JSON.stringify(name)} (metadata.name, as spec.name is omitted) ${rule} (S3 naming rules); set spec.name`;
  if (!BUCKET_NAME_PATTERN.test(name)) {
    return why(
      "must be 3 to 63 lower-case letters, digits, dots and hyphens, beginning and ending with a letter or digit",
    );
  }
  if (name.includes("..")) return why("must not contain two adjacent periods");
  if (/^\d+\.\d+\.\d+\.\d+$/.test(name)) return why("must not be formatted as an IP address");
  if (name.startsWith("xn--") || name.startsWith("sthree-")) {
    return why("must not begin with xn-- or sthree-");
  }
  if (name.endsWith("-s3alias") || name.endsWith("--ol-s3")) {
    return why("must not end with -s3alias or --ol-s3");
  }
  return undefined;
}
