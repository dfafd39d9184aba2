/**
 * What crosses between the managed loop (reconciler.ts) and a kind's client
 * (external-client.ts): the object, what a call sees (its context and resolved
 * references, and the cache reader a kind resolves them with), and the answers of the
 * client's methods.
 */
import type { Logger } from "pino";
import type { ConditionReason } from "../../crds/reasons.js";
import type { CacheReader } from "../../runtime/cache.js";
import type { Condition } from "../../runtime/object-writes.js";
import type { ObjectMeta, ResourceDescriptor } from "../../runtime/resource.js";
import type { ListSnapshotView } from "../../service/list-snapshot.js";
import type { EventReason } from "../event-reasons.js";

/**
 * The fields every managed kind's object has. No index signature, so the kinds' own
 * types (`CustomResource<Spec, Status>` from src/crds) satisfy it as they are; a type
 * (not an interface), so that an object of it is also the runtime's `KubeObject` (the
 * same JSON object) and goes to the cache and the writers as it is.
 */
export type ManagedObject = {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec: {
    deletionPolicy?: "Orphan" | "Delete";
    managementPolicies?: readonly string[];
    /** Where the loop's export step writes the connection details (export.ts). */
    exportTo?: { configMapName?: string; secretName?: string };
  };
  status?: {
    conditions?: Condition[];
    observedGeneration?: number;
    lastHandledReconcileAt?: string;
    /** The names of spec.exportTo last reconciled (export.ts). */
    exportedConfigMapName?: string;
    exportedSecretName?: string;
  };
};

/**
 * What a method of the kind's client gets besides its arguments: the object, the
 * references the kind's reference step resolved, the time, a logger, events on the
 * object and annotation writes of the kind's own annotations (never the loop's, which
 * decisions.ts lists).
 */
export interface ManagedCall<T extends ManagedObject, Refs = unknown> {
  /** The object as last written by this reconcile (annotations current). */
  readonly obj: T;
  /**
   * What {@link ManagedKind.resolveReferences} resolved in this reconcile; undefined
   * when the kind has no such step, its references do not resolve now (the loop then
   * observes an existing resource but neither creates nor updates it), or they are
   * create-only and the object is bound already. In deletion they are resolved for
   * `beforeDelete` only.
   */
  readonly refs: Refs | undefined;
  /** The current time of the operator's clock (a fake clock in tests). */
  now(): Date;
  /** The reconcile's logger (controller, key and reconcile id in every line). */
  readonly log: Logger;
  /** A Normal Kubernetes Event on the object (repeats aggregated). */
  normal(reason: EventReason, note: string): void;
  /** A Warning Kubernetes Event on the object (repeats aggregated). */
  warning(reason: EventReason, note: string): void;
  /**
   * Sets (string) or removes (null) annotations of the kind's own (not the loop's),
   * conditioned on the object's resourceVersion, and makes the result the `obj` of the
   * rest of the reconcile. Use it to record an intent durably BEFORE a non-idempotent
   * call (e.g. a scale).
   */
  annotate(annotations: Record<string, string | null>): Promise<T>;
}

/**
 * The call of `preflight` and `create`: the loop creates nothing before the kind's
 * references resolve, so `refs` is there (undefined only for a kind without the step).
 */
export type ResolvedCall<T extends ManagedObject, Refs = unknown> = ManagedCall<T, Refs> & {
  readonly refs: Refs;
};

/**
 * Reads, for {@link ManagedKind.resolveReferences}, the objects of the object's own
 * namespace from the informer cache (a reference never reaches into another
 * namespace). Only the kinds the controller declares as references (and the kind
 * itself) are cached: reading another throws.
 */
export interface ReferenceReader {
  /** The object is bound to a remote resource (an id recorded or adopted). */
  readonly bound: boolean;
  /** The object `name` of `resource` in the object's namespace, if cached. */
  get<O>(resource: ResourceDescriptor, name: string): O | undefined;
  /** Every cached object of `resource` in the object's namespace. */
  list<O>(resource: ResourceDescriptor): O[];
}

/** The {@link ReferenceReader} over `cache` for the objects of `namespace`. */
export function referenceReader(
  cache: CacheReader,
  namespace: string,
  bound: boolean,
): ReferenceReader {
  return {
    bound,
    get: <O>(resource: ResourceDescriptor, name: string) =>
      cache.get(resource, { namespace, name }) as O | undefined,
    list: <O>(resource: ResourceDescriptor) => cache.list(resource, namespace) as O[],
  };
}

/**
 * What a kind's reference resolution found: everything its client needs from other
 * objects, or why the object must wait (a reason of src/crds/reasons.ts naming the
 * missing or unready reference; it becomes ReferencesResolved=False).
 */
export type ReferenceResolution<Refs> =
  | { resolved: true; refs: Refs }
  | {
      resolved: false;
      reason: ConditionReason;
      message: string;
      /** Looked at again every poll: no reference watch brings the change it waits for. */
      retry?: boolean;
    };

/** A Ready condition as the kind states it (times and generation filled in by the loop). */
export interface ReadyState {
  status: "True" | "False" | "Unknown";
  /** One of src/crds/reasons.ts, whose table says whether it is terminal. */
  reason: ConditionReason;
  message: string;
}

/** The remote identity and create progress, as the loop shows it in status. */
export interface ManagedFacts {
  externalId?: string;
  subscriptionKey?: string;
  subscription?: {
    outcome: "Pending" | "Succeeded" | "Failed";
    message?: string;
    submittedTime?: string;
  };
  /** A create was sent and its resource is not bound yet (`aidc.io/create-pending`). */
  creating?: boolean;
}

/** What `observe` found out about the remote resource bound to the object. */
export type Observation<R> =
  | { exists: false }
  | {
      exists: true;
      /** False when the spec asks for a change that `update` should make. */
      upToDate: boolean;
      /**
       * The spec fields that differ from the remote resource when not `upToDate` (the
       * DriftDetected message names them when the policies forbid Update).
       */
      differs?: readonly string[];
      /**
       * What the spec asks that the operator's settings refuse (not a remote change, so
       * not drift): Synced=False with this reason under any policies. `upToDate` is
       * false with it, so that `update` applies the rest and answers the same refusal.
       */
      refused?: { reason: ConditionReason; message: string };
      /** The Ready condition the remote state implies. */
      ready: ReadyState;
      /** The remote record, handed to `update` and to `ManagedKind.status`. */
      remote: R;
      /**
       * Parts of the record that Ready and the update decision do not need were left for
       * a follow-up read (e.g. a job's storages and pods on its first look); the loop
       * looks again soon, as a follow-up, and the kind reads the parts then.
       */
      partial?: boolean;
    };

/** What `create` answered. */
export interface CreateResult {
  /** Key of the asynchronous subscription, to poll with `pollSubscription`. */
  subscriptionKey?: string;
  /** The id, when the create answered it at once (no subscription to poll). */
  externalId?: string;
}

/** What `update` did. */
export type UpdateResult =
  /** A change was sent; `message` goes into a Normal `Updated` event. */
  | { outcome: "Applied"; message: string }
  /** Nothing sent yet (e.g. waiting for an earlier change to show); poll again. */
  | { outcome: "Waiting"; message: string }
  /** The change is refused without calling the service (e.g. a shrink below used). */
  | { outcome: "Refused"; reason: ConditionReason; message: string };

/**
 * What `delete` did: "Deleted" (gone, or the service's delete is synchronous),
 * "InProgress" (accepted; the loop observes until the resource is gone, and only then
 * removes the finalizer), or "NotConfigured" (no delete operation: orphaned).
 */
export type DeleteResult = "Deleted" | "InProgress" | "NotConfigured";

/** The state of a subscription (asynchronous create). */
export type SubscriptionPoll =
  /** `empty`: the answer held no result at all (order.ts). */
  | { state: "Pending"; empty?: true | undefined }
  /** `externalId` absent: the service did not say; the loop looks the resource up by token. */
  | { state: "Succeeded"; externalId?: string }
  | { state: "Failed"; message: string };

/**
 * What a kind's lookup recognises a create's resource by, as messages name it: `what`
 * the remote resources carry (e.g. "client token") and its `value` for the object.
 */
export interface LookupKey {
  what: string;
  value: string;
}

/** The create a lookup recovers: its client token and when it was sent (RFC 3339). */
export interface SentCreate {
  token: string;
  at: string;
}

/** An observation read from a snapshot of the kind's list, and when that list was walked. */
export interface ListedObservation<R> {
  observation: Observation<R> & { exists: true };
  /** When the walk the record comes from started (ms since the epoch). */
  fetchedAt: number;
}

/**
 * The observation of record `id` from a snapshot of the kind's list, as `observe` judges
 * it; undefined, for a detail read, without a snapshot, when it does not list the record,
 * when the listed record lacks what `observe` needs (`suffices`), or when a change is to
 * be made (acted on after a detail read, never on a listed record).
 */
export function listedObservation<R>(
  view: ListSnapshotView<R> | undefined,
  id: string,
  observe: (record: R) => Observation<R> & { exists: true },
  suffices: (record: R) => boolean = () => true,
): ListedObservation<R> | undefined {
  const record = view?.records.get(id);
  if (!view || !record || !suffices(record)) return undefined;
  const observation = observe(record);
  return observation.upToDate ? { observation, fetchedAt: view.fetchedAt } : undefined;
}

/**
 * What a step before deletion answered: "Done" (delete now), or a wait: `waiting` goes
 * into Ready=False with `reason` (default `Deleting`), asked again after
 * `requeueAfterMs` (default soon).
 */
export type BeforeDeleteResult =
  | "Done"
  | { waiting: string; reason?: ConditionReason; requeueAfterMs?: number };

/**
 * The owner of a remote resource as its mark records it (hashes, not names; the kind's
 * `ownerOf` answers it, tenancy.ts makes and reads it).
 */
export interface OwnerMark {
  /** Hash of the namespace. */
  namespace: string;
  /** Hash of `namespace/name`. */
  object: string;
}

/**
 * What `ownerOf` answers for a record that leaves out the field the mark travels in (a
 * list without it, and no detail read): whose the resource is cannot be read.
 */
export interface UnreadMark {
  /** The field the record does not show. */
  unread: string;
}

/** A refusal of a preflight check: a condition, and no order is placed. */
export interface PreflightRefusal {
  /** One of src/crds/reasons.ts (Terminal when only a spec change can help). */
  reason: ConditionReason;
  message: string;
  /** True when the refusal may go away by itself (e.g. capacity unavailable now): poll. */
  retry?: boolean;
}
