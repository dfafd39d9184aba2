/**
 * The Bucket's remote resource behind the managed loop's ExternalClient: a bucket of
 * the object's connection's S3 storage, its id the bucket name.
 *
 * S3 has no client tokens: CreateBucket by name is the idempotency key. A create is
 * preceded by a HEAD (a name another account has → BucketNameTaken; one this account
 * has without `spec.adopt` → BucketExistsNotAdopted, nothing created), and its answer
 * tells the same apart (BucketAlreadyOwnedByYou is adopted only when asked). The owner
 * mark (managed/tenancy.ts) is written as the tag `aidc.io/owner` right after the
 * create; a crash before it is recovered by the lookup: a bucket without a mark created
 * after the create-pending marker was written is the one the create made.
 */
import { BUCKET_REASONS, type Bucket } from "../../crds/bucket.js";
import { errorMessage } from "../../runtime/errors.js";
import type { ObjectStorageClient, ObjectStorageResolver } from "../../service/object-storage.js";
import { accessHint, BucketNameRefusedError } from "../../service/object-storage-errors.js";
import { terminalError } from "../event-reasons.js";
import type {
  BeforeDeleteResult,
  CreateResult,
  DeleteResult,
  LookupKey,
  ManagedCall,
  Observation,
  OwnerMark,
  PreflightRefusal,
  SentCreate,
  UpdateResult,
} from "../managed/call.js";
import type { KindClient } from "../managed/external-client.js";
import { parseOwnerMark } from "../managed/tenancy.js";
import {
  type AppliedRecord,
  applyChanges,
  feature,
  observed,
  policyProblem,
  recordApplied,
  UpToDateGenerations,
} from "./changes.js";
import { beforeBucketDelete } from "./deletion.js";
import {
  type BucketRemote,
  desiredOf,
  FEATURE_TITLES,
  type FeatureChange,
  featureChanges,
  isNotImplemented,
  markOf,
  OWNER_TAG,
  recreatedOutside,
} from "./features.js";
import { bucketNameProblem, refuseUnusableBoundName } from "./naming.js";
import {
  listing,
  madeByCreate,
  notTheAccounts,
  notTheRecorded,
  presenceRefusal,
} from "./ownership.js";
import { FeatureWrites, notKeptMessage, unkeptFields } from "./writes.js";

const R = BUCKET_REASONS.names;

/** A Bucket object as the loop hands it. */
export type BucketObject = Bucket;

/** The bucket name of `obj`: spec.name, else metadata.name. */
export function bucketNameOf(obj: BucketObject): string {
  return obj.spec.name ?? obj.metadata.name ?? "";
}

/** The Bucket kind's ExternalClient; `applied` is shared with the status mapping. */
export class BucketExternalClient implements KindClient<BucketObject, BucketRemote> {
  /** `exportRefusal`: why `spec.exportTo.secretName` is not written (Synced=False), if so. */
  constructor(
    private readonly storage: ObjectStorageResolver,
    readonly applied: Map<string, AppliedRecord>,
    private readonly pollIntervalMs: number,
    private readonly exportRefusal: (obj: BucketObject) => string | undefined = () => undefined,
  ) {}

  /**
   * By object uid: the features the server refused with NotImplemented when they were
   * written (a server may read a feature as empty and still refuse to set it).
   */
  readonly refused = new Map<string, string[]>();
  private readonly upToDate = new UpToDateGenerations();
  /** What the server did with the writes of each bucket at its generation (writes.ts). */
  private readonly writes = new FeatureWrites();

  /** The object's S3 client; with the bound bucket `name`, once that name is checked. */
  private async s3(call: ManagedCall<BucketObject>, name?: string): Promise<ObjectStorageClient> {
    if (name !== undefined) refuseUnusableBoundName(name);
    const client = await this.storage(call.obj);
    if (!client) {
      throw terminalError(
        R.ObjectStorageNotConfigured,
        "the object's connection has no object storage: set objectStorage.endpoint and the S3 credentials in the operator configuration (or the ServiceConnection's spec.objectStorage)",
        { external: true },
      );
    }
    return client;
  }

  async preflight(call: ManagedCall<BucketObject>): Promise<PreflightRefusal | undefined> {
    const name = bucketNameOf(call.obj);
    const problem = bucketNameProblem(name);
    if (problem) return { reason: R.InvalidBucketName, message: problem };
    return presenceRefusal(await this.s3(call), name, call.obj.spec.adopt === true);
  }

  async create(call: ManagedCall<BucketObject>, _token: string): Promise<CreateResult> {
    const s3 = await this.s3(call);
    const name = bucketNameOf(call.obj);
    // S3 in us-east-1 (and moto) answers 200, not BucketAlreadyOwnedByYou, to a
    // CreateBucket of a bucket the account has: one to adopt is looked at first, and is
    // the account's own when its bucket list has it (a HEAD also answers 200 for another
    // account's bucket that grants this one a read).
    const owned =
      call.obj.spec.adopt &&
      (await s3.headBucket(name)) === "Present" &&
      (await s3.listBuckets()).some((b) => b.name === name);
    const answer = owned ? "AlreadyOwnedByYou" : await s3.createBucket(name);
    if (answer === "TakenElsewhere") {
      throw new BucketNameRefusedError(
        "BucketNameTaken",
        `a bucket named ${name} belongs to another account (BucketAlreadyExists); choose another spec.name`,
        name,
      );
    }
    if (answer === "AlreadyOwnedByYou") {
      if (!call.obj.spec.adopt) {
        throw new BucketNameRefusedError(
          "BucketExistsNotAdopted",
          `a bucket named ${name} exists already in the account (BucketAlreadyOwnedByYou); set spec.adopt: true to manage it`,
          name,
        );
      }
      call.normal("Adopted", `adopted the existing bucket ${name}`);
      return { externalId: name };
    }
    // The owner mark proves whose bucket it is; refused, it is drift the update puts back.
    const tags = desiredOf(call.obj.spec, markOf(call.obj), {}).tags;
    const unwritten = (err: unknown) =>
      call.log.warn({ bucket: name, err: errorMessage(err) }, "owner tag not written");
    await s3
      .putTags(name, tags)
      .catch(() => s3.putTags(name, { [OWNER_TAG]: markOf(call.obj) }))
      .catch(unwritten);
    return { externalId: name };
  }

  /** Buckets carry no client token: the bucket of a create is found by its name. */
  lookupKey(obj: BucketObject): LookupKey {
    return { what: "bucket name", value: bucketNameOf(obj) };
  }

  async lookupByToken(call: ManagedCall<BucketObject>, create: SentCreate): Promise<string[]> {
    return madeByCreate(await this.s3(call), call.obj, bucketNameOf(call.obj), create);
  }

  async observe(call: ManagedCall<BucketObject>, name: string): Promise<Observation<BucketRemote>> {
    const s3 = await this.s3(call, name);
    const presence = await s3.headBucket(name);
    if (presence === "Absent") return { exists: false };
    if (presence === "Forbidden") {
      throw terminalError(
        "ReconcileTerminal",
        `the bucket ${name} answered 403 to HEAD: another account has it now, or ${accessHint("HeadBucket", name)}`,
        { external: true },
      );
    }
    const { spec } = call.obj;
    const [versioning, lifecycle, policy, tags, cors, recent] = await Promise.all([
      observed(() => s3.getVersioning(name), !spec.versioning),
      observed(() => s3.getLifecycle(name), !spec.lifecycleRules),
      observed(() => s3.getPolicy(name), spec.policy === undefined),
      feature(() => s3.getTags(name)),
      observed(() => s3.getCors(name), !spec.cors),
      listing(s3, name, this.pollIntervalMs),
    ]);
    const remote: BucketRemote = {
      name,
      url: s3.bucketUrl(name),
      region: s3.region,
      versioning,
      lifecycle,
      policy,
      tags,
      cors,
    };
    const changes = this.changesOf(call.obj, remote);
    // A change is made on a list read now: it shows a bucket made outside since.
    const listed = changes.length > 0 && !recent.fresh ? await listing(s3, name) : recent;
    if (notTheAccounts(listed)) {
      throw terminalError(
        "ReconcileTerminal",
        `the bucket ${name} answers HEAD, but the account's bucket list does not have it: another account has it (one that grants this account a read); nothing is changed`,
        { external: true },
      );
    }
    if (listed.entry?.creationDate) remote.creationDate = listed.entry.creationDate;
    if (recreatedOutside(call.obj, remote)) return { exists: false };
    // Refused in update, where Synced says why (an export refusal under any policies).
    const unmet = policyProblem(call.obj.spec.policy) ? ["policy"] : [];
    const exportRefused = this.exportRefusal(call.obj);
    if (changes.length === 0) {
      this.refused.delete(call.obj.metadata.uid ?? "");
      this.writes.forget(call.obj);
      this.upToDate.note(call.obj);
    }
    return {
      exists: true,
      upToDate: changes.length === 0 && unmet.length === 0 && !exportRefused,
      differs: [...new Set(changes.map((c) => c.feature)), ...unmet],
      ...(exportRefused
        ? { refused: { reason: R.CredentialsExportNotAllowed, message: exportRefused } }
        : {}),
      ready: {
        status: "True",
        reason: "Available",
        message: `bucket ${name} at ${remote.url}`,
      },
      remote,
    };
  }

  private changesOf(obj: BucketObject, remote: BucketRemote): FeatureChange[] {
    const tags = isNotImplemented(remote.tags) ? undefined : remote.tags;
    return featureChanges(desiredOf(obj.spec, markOf(obj), tags), remote);
  }

  async update(
    call: ManagedCall<BucketObject>,
    name: string,
    remote: BucketRemote,
  ): Promise<UpdateResult> {
    const problem = policyProblem(call.obj.spec.policy);
    const s3 = await this.s3(call, name);
    const tagsNow = isNotImplemented(remote.tags) ? undefined : remote.tags;
    const desired = desiredOf(call.obj.spec, markOf(call.obj), tagsNow);
    const changes = this.changesOf(call.obj, remote);
    const log = this.writes.log(call, remote);
    const result = await applyChanges(s3, name, changes, desired, !!problem, log);
    const { applied, rechecked, unsupported, notKept } = result;
    const uid = call.obj.metadata.uid ?? "";
    if (applied.length > 0) {
      this.applied.set(uid, recordApplied(call, applied, this.upToDate, rechecked));
    }
    this.refused.set(uid, unsupported);
    const fields = notKept.flatMap((f) => unkeptFields(f, desired[f], remote[f]));
    const sent = applied.length ? `; applied: ${applied.join(", ")}` : "";
    const done = sent + (fields.length ? `; also, ${notKeptMessage(fields)}` : "");
    if (problem)
      return { outcome: "Refused", reason: R.InvalidBucketPolicy, message: `${problem}${done}` };
    if (unsupported.length > 0) {
      // Without spec.tags, the tag written is the owner mark alone.
      const named = unsupported.map((t) =>
        t === FEATURE_TITLES.tags && !call.obj.spec.tags ? `tags (the owner mark ${OWNER_TAG})` : t,
      );
      return {
        outcome: "Refused",
        reason: R.FeatureNotImplemented,
        message: `the object storage does not implement ${named.join(", ")} (it answered NotImplemented); remove the field from the spec or use a server that supports it${done}`,
      };
    }
    if (fields.length > 0) {
      return { outcome: "Refused", reason: R.FieldNotKept, message: notKeptMessage(fields) + sent };
    }
    const exportRefused = this.exportRefusal(call.obj);
    if (exportRefused) {
      return {
        outcome: "Refused",
        reason: R.CredentialsExportNotAllowed,
        message: exportRefused + done,
      };
    }
    return { outcome: "Applied", message: `bucket ${name}: applied ${applied.join(", ")}` };
  }

  async beforeDelete(call: ManagedCall<BucketObject>, name: string): Promise<BeforeDeleteResult> {
    return beforeBucketDelete(await this.s3(call, name), call, name, this.pollIntervalMs);
  }

  async delete(call: ManagedCall<BucketObject>, name: string): Promise<DeleteResult> {
    const s3 = await this.s3(call, name);
    if (!(await notTheRecorded(s3, call.obj, name))) await s3.deleteBucket(name);
    return "Deleted";
  }

  ownerOf(remote: BucketRemote): OwnerMark | undefined {
    return isNotImplemented(remote.tags) ? undefined : parseOwnerMark(remote.tags[OWNER_TAG]);
  }
}
