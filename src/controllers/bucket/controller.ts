/**
 * The Bucket controller: the generic managed reconciler (../managed, declared with
 * `managedController`) with the S3 ExternalClient (external.ts) and the status mapping
 * below. The object storage comes from the object's connection (`deps.objectStorage`).
 */
import { type BucketStatus, bucketCrd } from "../../crds/bucket.js";
import type { ControllerDefinition } from "../../runtime/controller.js";
import { capValue } from "../../runtime/object-writes.js";
import { jsonEqual, toJson } from "../../runtime/resource.js";
import type { ObjectStorageResolver } from "../../service/object-storage.js";
import type { ConnectionSource } from "../connections/registry.js";
import type { ControllerDeps } from "../controller-factory.js";
import type { ManagedFacts } from "../managed/call.js";
import { exportData } from "../managed/export.js";
import type { ManagedKind } from "../managed/external-client.js";
import { managedController, managedLoopOptions } from "../managed/managed-controller.js";
import type { AppliedRecord } from "./changes.js";
import { BucketExternalClient, type BucketObject, bucketNameOf } from "./external.js";
import {
  type BucketRemote,
  FEATURE_TITLES,
  FEATURES,
  isNotImplemented,
  isUnread,
} from "./features.js";
import {
  CREDENTIALS_EXPORT_DISABLED,
  credentialsExport,
  credentialsExportRefusal,
  objectStorageOf,
} from "./storage.js";

/** The finalizer of Buckets. */
export const BUCKET_FINALIZER = "aidc.io/bucket";

/**
 * How long a bucket created by a create whose answer was lost is looked up: S3 is
 * strongly consistent (a created bucket answers HEAD at once), so a short window.
 */
export const BUCKET_VISIBILITY_WINDOW_MS = 30_000;

const rfc3339 = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, "Z");

/**
 * The Bucket status (without conditions) from the facts and the remote record; the
 * remote fields of the previous status are kept when nothing was observed.
 */
export function bucketStatus(
  obj: BucketObject,
  facts: ManagedFacts,
  remote: BucketRemote | undefined,
  applied: AppliedRecord | undefined,
  refused: readonly string[] = [],
): BucketStatus {
  const { conditions: _c, observedGeneration: _g, ...prev } = obj.status ?? {};
  if (!remote) {
    const out: BucketStatus = facts.externalId ? { ...prev } : {};
    if (applied) out.lastApplied = applied;
    return out;
  }
  const out: BucketStatus = {
    bucketName: remote.name,
    endpoint: remote.url,
    region: capValue(remote.region),
  };
  if (remote.creationDate) out.creationTime = rfc3339(remote.creationDate);
  // A feature not implemented, or unread (its read refused), has no field.
  const { versioning, lifecycle, policy, tags, cors } = remote;
  if (!isNotImplemented(versioning) && !isUnread(versioning)) out.versioning = versioning;
  if (!isNotImplemented(lifecycle) && !isUnread(lifecycle)) out.lifecycleRules = lifecycle.length;
  if (!isNotImplemented(policy) && !isUnread(policy)) out.policy = policy !== undefined;
  if (!isNotImplemented(tags)) out.tags = Object.keys(tags).length;
  if (!isNotImplemented(cors) && !isUnread(cors)) out.corsRules = cors.length;
  const unsupported = [
    ...new Set([
      ...FEATURES.filter((f) => isNotImplemented(remote[f])).map((f) => FEATURE_TITLES[f]),
      ...refused,
    ]),
  ];
  if (unsupported.length) out.unsupported = unsupported;
  const last = applied ?? prev.lastApplied;
  if (last) out.lastApplied = last;
  return out;
}

/**
 * Builds the managed kind of Bucket over the objects' object storage. `exporting` is
 * set when the operator's `objectStorage.exportCredentials` is on: the kind then writes
 * the S3 key pair of an object's connection into the Secret of its
 * `spec.exportTo.secretName` where that connection allows it (and so declares the
 * Secret rule); unset, it never touches a Secret.
 */
export function bucketKind(
  storage: ObjectStorageResolver,
  pollIntervalMs: number,
  exporting?: ConnectionSource,
): ManagedKind<BucketObject, BucketRemote> {
  const exportRefusal = (obj: BucketObject) => {
    const to = obj.spec.exportTo;
    const secretName = to && "secretName" in to ? to.secretName : undefined;
    if (!secretName) return undefined;
    const why = exporting
      ? credentialsExportRefusal(true, exporting.forObject(obj))
      : CREDENTIALS_EXPORT_DISABLED;
    return why && `Secret ${secretName} (spec.exportTo.secretName) not written: ${why}`;
  };
  const client = new BucketExternalClient(storage, new Map(), pollIntervalMs, exportRefusal);
  return {
    resource: bucketCrd,
    finalizer: BUCKET_FINALIZER,
    exportValues: (_obj, status) =>
      exportData({
        BUCKET_NAME: status.bucketName,
        BUCKET_ENDPOINT: status.endpoint,
        BUCKET_REGION: status.region,
      }),
    ...(exporting
      ? {
          exportSecretValues: (obj: BucketObject) =>
            credentialsExport(true, exporting.forObject(obj)),
        }
      : {}),
    // S3, not the service: the client finds each object's storage through its
    // connection (storage.ts), one client for every account.
    connect: () => client,
    status: (obj, facts, remote) => {
      const uid = obj.metadata.uid ?? "";
      // Kept until the status shows it: a status write that fails (a conflict) must not
      // lose what the reconcile applied (a drift correction would read as drift: false).
      const applied = client.applied.get(uid);
      if (applied && jsonEqual(toJson(applied), toJson(obj.status?.lastApplied))) {
        client.applied.delete(uid);
      }
      const refused = client.refused.get(uid);
      return bucketStatus(obj, facts, remote, applied, refused) as Record<string, unknown>;
    },
    statusId: (obj) =>
      obj.status?.bucketName === bucketNameOf(obj) ? obj.status.bucketName : undefined,
  };
}

/** Tunables of the Bucket controller beyond the operator config (tests shorten them). */
export interface BucketControllerOptions {
  /** How long a bucket of a create with a lost answer is looked up. Default 30 s. */
  visibilityGraceMs?: number;
}

/**
 * The Bucket controller, with `options` beyond the operator config (a
 * ControllerFactory: src/controllers/index.ts registers it).
 */
export function bucketController(
  deps: ControllerDeps,
  options: BucketControllerOptions = {},
): ControllerDefinition {
  const loop = managedLoopOptions(
    deps.config,
    "Bucket",
    options.visibilityGraceMs ?? BUCKET_VISIBILITY_WINDOW_MS,
    deps.config.objectStorage.timeoutMs,
  );
  return managedController(
    bucketKind(
      objectStorageOf(deps),
      loop.pollIntervalMs,
      deps.config.objectStorage.exportCredentials ? deps.connections : undefined,
    ),
    {
      loop,
      connections: deps.connections,
    },
  );
}
