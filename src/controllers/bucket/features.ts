/**
 * Pure decisions of the Bucket controller: what the bucket looks like (the remote
 * record), what the spec asks of each feature, and which features differ. Every
 * feature the spec omits is left as it is (except the owner mark among the tags);
 * every feature it states is kept so, and put back when changed outside the cluster.
 */
import type { Bucket, BucketSpec } from "../../crds/bucket.js";
import type { CorsRule, LifecycleRule, VersioningState } from "../../service/object-storage.js";
import { formatOwnerMark, ownerMark } from "../managed/tenancy.js";

/** The tag that carries the operator's owner mark (managed/tenancy.ts). */
export const OWNER_TAG = "aidc.io/owner";

/** A feature's value, or the server's answer that it does not implement it. */
export type Feature<T> = T | { notImplemented: true };

/**
 * A feature the spec omits, read for the status only: its read refused (AccessDenied),
 * it is shown nowhere and changed never, as it is left as it is.
 */
export type Observed<T> = Feature<T> | { unread: true };

/** True when the server answered NotImplemented for the feature. */
export function isNotImplemented(f: unknown): f is { notImplemented: true } {
  return typeof f === "object" && f !== null && "notImplemented" in f;
}

/** True when the feature's read was refused (see {@link Observed}). */
export function isUnread(f: unknown): f is { unread: true } {
  return typeof f === "object" && f !== null && "unread" in f;
}

/** How much older than the create-pending marker a bucket made by its create may look (clock skew). */
export const CREATION_CLOCK_SKEW_MS = 60_000;

/** The owner mark of Bucket `obj`, the value of its tag {@link OWNER_TAG}. */
export function markOf(obj: Pick<Bucket, "metadata">): string {
  return formatOwnerMark(ownerMark(obj.metadata.namespace ?? "", obj.metadata.name ?? ""));
}

/**
 * Whether `remote` is not the bucket the status records (`creationTime`) but one made
 * later under its name outside the cluster: created in a later second and without this
 * object's owner mark, it is another's bucket, never to be changed or emptied.
 */
export function recreatedOutside(
  obj: Pick<Bucket, "metadata" | "status">,
  remote: Pick<BucketRemote, "creationDate" | "tags">,
): boolean {
  const recorded = Date.parse(obj.status?.creationTime ?? "");
  if (!remote.creationDate || !Number.isFinite(recorded)) return false;
  if (!isNotImplemented(remote.tags) && remote.tags[OWNER_TAG] === markOf(obj)) return false;
  return remote.creationDate.getTime() >= recorded + 1000;
}

/** The bucket as one observe reads it. */
export interface BucketRemote {
  name: string;
  /** Path-style URL of the bucket. */
  url: string;
  /** Region its requests are signed for. */
  region: string;
  creationDate?: Date;
  versioning: Observed<VersioningState>;
  lifecycle: Observed<LifecycleRule[]>;
  /** JSON text; undefined when the bucket has none. */
  policy: Observed<string | undefined>;
  tags: Feature<Record<string, string>>;
  cors: Observed<CorsRule[]>;
}

/** The features of a bucket, in the order they are applied. */
export const FEATURES = ["versioning", "lifecycle", "policy", "tags", "cors"] as const;
/** One feature. */
export type FeatureName = (typeof FEATURES)[number];

/** How a feature is named in messages (S3's own names). */
export const FEATURE_TITLES: Record<FeatureName, string> = {
  versioning: "versioning",
  lifecycle: "lifecycle rules",
  policy: "bucket policy",
  tags: "tags",
  cors: "CORS",
};

/** What the spec asks of each feature; undefined: leave as it is. */
export interface BucketDesired {
  versioning?: "Enabled" | "Suspended";
  lifecycle?: LifecycleRule[];
  /** JSON text, or null for "no policy". */
  policy?: string | null;
  /** The whole tag set (the owner mark included). */
  tags: Record<string, string>;
  cors?: CorsRule[];
}

/**
 * The desired features of `spec`, with `mark` (the owner mark) among the tags. Without
 * `spec.tags`, the tags the bucket has are kept and only the mark is added.
 */
export function desiredOf(
  spec: BucketSpec,
  mark: string,
  remoteTags: Record<string, string> | undefined,
): BucketDesired {
  const userTags = spec.tags ?? stripOwner(remoteTags ?? {});
  return {
    ...(spec.versioning ? { versioning: spec.versioning } : {}),
    ...(spec.lifecycleRules
      ? {
          lifecycle: spec.lifecycleRules.map((r) => ({
            id: r.id,
            prefix: r.prefix ?? "",
            enabled: r.enabled ?? true,
            ...(r.expirationDays ? { expirationDays: r.expirationDays } : {}),
            ...(r.noncurrentVersionExpirationDays
              ? { noncurrentVersionExpirationDays: r.noncurrentVersionExpirationDays }
              : {}),
          })),
        }
      : {}),
    ...(spec.policy !== undefined ? { policy: spec.policy.trim() ? spec.policy : null } : {}),
    tags: { ...userTags, [OWNER_TAG]: mark },
    ...(spec.cors
      ? {
          cors: spec.cors.map((r) => ({
            allowedOrigins: r.allowedOrigins,
            allowedMethods: r.allowedMethods,
            allowedHeaders: r.allowedHeaders ?? [],
            exposeHeaders: r.exposeHeaders ?? [],
            ...(r.maxAgeSeconds !== undefined ? { maxAgeSeconds: r.maxAgeSeconds } : {}),
          })),
        }
      : {}),
  };
}

function stripOwner(tags: Record<string, string>): Record<string, string> {
  const { [OWNER_TAG]: _mark, ...rest } = tags;
  return rest;
}

/** A JSON value with object keys sorted and arrays sorted, for comparisons by meaning. */
function canonical(value: unknown, sortArrays: boolean): unknown {
  if (Array.isArray(value)) {
    const items = value.map((v) => canonical(v, sortArrays));
    return sortArrays
      ? items.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))
      : items;
  }
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k], sortArrays)]),
    );
  }
  return value;
}

/** Policy fields whose single string S3 servers may turn into a one-item list. */
const LIST_FIELDS = new Set([
  "Action",
  "NotAction",
  "Resource",
  "NotResource",
  "AWS",
  "Service",
  "Federated",
  "CanonicalUser",
]);

/**
 * A bucket policy in a form that compares by meaning: servers re-serialize a stored
 * policy (MinIO turns `"Principal": "*"` into `{"AWS": ["*"]}` and single actions into
 * lists, drops empty Sids), so those spellings are made one. Undefined when `text` is
 * not a JSON object.
 */
export function canonicalPolicy(text: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return undefined;
  const fix = (v: unknown, key = ""): unknown => {
    if (key === "Principal" && v === "*") return { AWS: ["*"] };
    if (LIST_FIELDS.has(key) && typeof v === "string") return [v];
    if (key === "Sid" && v === "") return undefined;
    if (key === "Statement" && v !== null && typeof v === "object" && !Array.isArray(v)) {
      return [fix(v)];
    }
    if (Array.isArray(v)) return v.map((x) => fix(x));
    if (v !== null && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) {
        const fixed = fix(x, k);
        if (fixed !== undefined) out[k] = fixed;
      }
      return out;
    }
    return v;
  };
  return JSON.stringify(canonical(fix(parsed), true));
}

/** `value` as text that compares by meaning (keys and lists in order). */
export const canonicalText = (value: unknown) => JSON.stringify(canonical(value, true)) ?? "";

const sameRules = (a: readonly unknown[], b: readonly unknown[]) =>
  canonicalText(a) === canonicalText(b);

/** One feature that differs from the spec. */
export interface FeatureChange {
  feature: FeatureName;
  /** The server answered NotImplemented for it: it cannot be applied. */
  notImplemented: boolean;
  /** What applying it sets, for events and status (never a secret). */
  summary: string;
}

/** The features of `remote` that differ from `desired`, in {@link FEATURES} order. */
export function featureChanges(desired: BucketDesired, remote: BucketRemote): FeatureChange[] {
  const out: FeatureChange[] = [];
  const add = <T>(
    feature: FeatureName,
    value: Observed<T>,
    same: (v: T) => boolean,
    summary: string,
  ) => {
    // Read only when the spec omits it (external.ts observe): nothing to change.
    if (isUnread(value)) return;
    if (isNotImplemented(value)) out.push({ feature, notImplemented: true, summary });
    else if (!same(value)) out.push({ feature, notImplemented: false, summary });
  };
  if (desired.versioning) {
    const want = desired.versioning;
    add("versioning", remote.versioning, (v) => v === want, `versioning ${want}`);
  }
  if (desired.lifecycle) {
    const want = desired.lifecycle;
    add(
      "lifecycle",
      remote.lifecycle,
      (v) => sameRules(v, want),
      `lifecycle rules (${want.length})`,
    );
  }
  if (desired.policy !== undefined) {
    const want = desired.policy === null ? undefined : canonicalPolicy(desired.policy);
    add(
      "policy",
      remote.policy,
      (v) => (v === undefined ? want === undefined : canonicalPolicy(v) === want),
      desired.policy === null ? "bucket policy removed" : "bucket policy",
    );
  }
  const tags = desired.tags;
  add("tags", remote.tags, (v) => sameRules([v], [tags]), `tags (${Object.keys(tags).length})`);
  if (desired.cors) {
    const want = desired.cors;
    add("cors", remote.cors, (v) => sameRules(v, want), `CORS rules (${want.length})`);
  }
  return out;
}
