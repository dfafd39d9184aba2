/**
 * The contract between the generic managed-resource reconciler (reconciler.ts) and one
 * kind's remote resource, in the crossplane-runtime style (a narrow external client:
 * it sees its object, its resolved references and the service in its closure, never
 * the Kubernetes client or the cache): the kind implements
 * {@link ExternalClient} (observe / create / pollSubscription / lookupByToken / update /
 * delete) and {@link ManagedKind} (how its status looks); the generic loop owns the
 * finalizer, the crash-safe create protocol, deletion policy, conditions, events,
 * status writes and requeues.
 *
 * Every method may throw: a service error (its `retryable` decides backoff or a terminal
 * hold), or a `RetryableError` / `TerminalError` with a PascalCase reason. The loop
 * turns it into Synced=False (reason and message) and a Warning event. Methods must not
 * write the object's status; annotations only through {@link ManagedCall.annotate}.
 */

import type { Logger } from "pino";
import type { ConditionReason } from "../../crds/reasons.js";
import type { Condition, ConditionInput } from "../../runtime/conditions.js";
import type { ObjectMeta, ResourceDescriptor } from "../../runtime/resource.js";
import type { ListedIds } from "../../service/pagination.js";
import type { LookupKey } from "./create-protocol.js";
import type { OwnerMark } from "./tenancy.js";

/**
 * The fields every managed kind's object has. No index signature, so the kinds' own
 * types (`CustomResource<Spec, Status>` from src/crds) satisfy it as they are.
 */
export interface ManagedObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec: { deletionPolicy?: "Orphan" | "Delete" };
  status?: { conditions?: Condition[]; observedGeneration?: number };
}

/**
 * What a method of an {@link ExternalClient} gets besides its arguments: the object, the
 * references the kind's reference step resolved, the time, a logger, events on the
 * object and annotation writes. Anything else from the cluster is read by the reference step
 * ({@link ManagedKind.resolveReferences}); other Kubernetes objects are another
 * controller's (e.g. TrainingJob exposure).
 */
export interface ManagedCall<T extends ManagedObject, Refs = unknown> {
  /** The object as last written by this reconcile (annotations current). */
  readonly obj: T;
  /**
   * What the kind's {@link ManagedKind.resolveReferences} step resolved in this
   * reconcile; undefined when the kind has no such step, or its references do not
   * resolve now (the loop then observes an existing resource but neither creates nor
   * updates it), or they are create-only and the object is bound already. In deletion
   * they are resolved for `beforeDelete` only.
   */
  readonly refs: Refs | undefined;
  /** The current time of the operator's clock (a fake clock in tests). */
  now(): Date;
  /** The reconcile's logger (controller, key and reconcile id in every line). */
  readonly log: Logger;
  /** A Normal Kubernetes Event on the object (repeats aggregated). */
  normal(reason: string, note: string): void;
  /** A Warning Kubernetes Event on the object (repeats aggregated). */
  warning(reason: string, note: string): void;
  /**
   * Sets (string) or removes (null) annotations of the object, conditioned on its
   * resourceVersion, and makes the result the `obj` of the rest of the reconcile. Use
   * it to record an intent durably BEFORE a non-idempotent call (e.g. a scale).
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
 * Reads, for a kind's {@link ManagedKind.resolveReferences}, the objects of the
 * object's own namespace from the informer cache (a reference never reaches into
 * another namespace). Only the kinds the controller declares as references (and the
 * kind itself) are cached: reading another throws.
 */
export interface ReferenceReader {
  /** The object `name` of `resource` in the object's namespace, if cached. */
  get<O>(resource: ResourceDescriptor, name: string): O | undefined;
  /** Every cached object of `resource` in the object's namespace. */
  list<O>(resource: ResourceDescriptor): O[];
}

/**
 * What a kind's reference resolution found: everything its client needs from other
 * objects, or why the object must wait (a reason of src/crds/reasons.ts that names the
 * missing or unready reference; it becomes ReferencesResolved=False).
 */
export type ReferenceResolution<Refs> =
  | { resolved: true; refs: Refs }
  | { resolved: false; reason: ConditionReason; message: string };

/** A Ready condition as the kind states it (times and generation filled in by the loop). */
export interface ReadyState {
  status: "True" | "False" | "Unknown";
  /** One of src/crds/reasons.ts, whose table says whether it is terminal. */
  reason: ConditionReason;
  message: string;
}

/** What `observe` found out about the remote resource bound to the object. */
export type Observation<R> =
  | { exists: false }
  | {
      exists: true;
      /** False when the spec asks for a change that `update` should make. */
      upToDate: boolean;
      /** The Ready condition the remote state implies. */
      ready: ReadyState;
      /** The remote record, handed to `update` and to {@link ManagedKind.status}. */
      remote: R;
      /**
       * Parts of the remote record that Ready and the update decision do not need were
       * left for a follow-up read (e.g. a job's storages and pods on its first look,
       * so that a new object is Ready after the fewest calls); the status says so. The
       * loop looks again soon ({@link ManagedOptions} `subscriptionPollMs` × 5, at most
       * the poll interval) as a routine poll, behind the keys with work to do, and the
       * kind reads the parts then.
       */
      partial?: boolean;
    };

/** An observation read from a snapshot of the kind's list, and when that list was walked. */
export interface ListedObservation<R> {
  observation: Observation<R> & { exists: true };
  /** When the walk the record comes from started (ms since the epoch). */
  fetchedAt: number;
}

/** What `create` answered. */
export interface CreateResult {
  /** Key of the asynchronous subscription, to poll with `pollSubscription`. */
  subscriptionKey?: string;
  /** The id, when the create answered it at once (no subscription to poll). */
  externalId?: string;
}

/** The state of a subscription (asynchronous create). */
export type SubscriptionPoll =
  | { state: "Pending" }
  /** `externalId` absent: the service did not say; the loop looks the resource up by token. */
  | { state: "Succeeded"; externalId?: string }
  | { state: "Failed"; message: string };

/** What `update` did. */
export type UpdateResult =
  /** A change was sent; `message` goes into a Normal `Updated` event. */
  | { outcome: "Applied"; message: string }
  /** Nothing sent yet (e.g. waiting for an earlier change to show); poll again. */
  | { outcome: "Waiting"; message: string }
  /** The change is refused without calling the service (e.g. a shrink below used). */
  | { outcome: "Refused"; reason: ConditionReason; message: string };

/**
 * What `delete` did: "Deleted" (the resource is gone, or the service's delete is
 * synchronous), "InProgress" (accepted; the loop observes until `observe` says the
 * resource is gone, and only then removes the finalizer), or "NotConfigured".
 */
export type DeleteResult = "Deleted" | "InProgress" | "NotConfigured";

/**
 * What a step before deletion ({@link ExternalClient.beforeDelete}) answered: "Done"
 * (delete now), or a wait: `waiting` goes into Ready=False with `reason` (default
 * `Deleting`), asked again after `requeueAfterMs` (default soon). A wait for a person
 * (e.g. a bucket to be emptied) gives a Terminal reason and the poll interval.
 */
export type BeforeDeleteResult =
  | "Done"
  | { waiting: string; reason?: ConditionReason; requeueAfterMs?: number };

/** A refusal of a preflight check: a condition, and no order is placed. */
export interface PreflightRefusal {
  /** One of src/crds/reasons.ts (Terminal when only a spec change can help). */
  reason: ConditionReason;
  message: string;
  /** True when the refusal may go away by itself (e.g. capacity unavailable now): poll. */
  retry?: boolean;
}

/**
 * One kind's remote resource, as the generic loop drives it. `Refs` is what the kind's
 * reference resolution hands the methods in `call.refs` (see {@link ManagedCall}).
 */
export interface ExternalClient<T extends ManagedObject, R, Refs = unknown> {
  /** An id in the spec that binds the object to an existing resource (adoption), if any. */
  adoptId?(obj: T): string | undefined;
  /**
   * Resolves when the service answers every operation an order needs to finish and be
   * observed (the subscription result, the list, the detail); throws otherwise (a
   * missing operation: terminal, external, naming the operation and its config key).
   * Called before the preflight of every create: nothing is ordered, and billed, that
   * could never finish.
   */
  requireOperations?(call: ManagedCall<T, Refs>): Promise<void>;
  /** Checks before the first create; a refusal is reported and nothing is ordered. */
  preflight?(call: ResolvedCall<T, Refs>): Promise<PreflightRefusal | undefined>;
  /** Reads the remote resource `externalId`; `{ exists: false }` when it is gone. */
  observe(call: ManagedCall<T, Refs>, externalId: string): Promise<Observation<R>>;
  /**
   * Whether the remote resource `externalId` still exists, as cheaply as the kind can
   * tell (one read; false when it is gone, errors as `observe`'s). Asked on every poll
   * of a deletion that waits for the resource to go (`delete` answered "InProgress");
   * absent, the loop calls `observe` instead.
   */
  exists?(call: ManagedCall<T, Refs>, externalId: string): Promise<boolean>;
  /**
   * Creates the remote resource carrying `token` (so `lookupByToken` can find it). A
   * thrown error whose `outcomeUnknown` is true means the create may have taken effect.
   */
  create(call: ResolvedCall<T, Refs>, token: string): Promise<CreateResult>;
  /** The state of subscription `key`. Required when `create` answers keys. */
  pollSubscription?(call: ManagedCall<T, Refs>, key: string): Promise<SubscriptionPoll>;
  /** Ids of remote resources carrying `token`; undefined when no list operation exists. */
  lookupByToken(call: ManagedCall<T, Refs>, token: string): Promise<string[] | undefined>;
  /**
   * What `lookupByToken` recognises the resource by, when not the create's client token
   * (e.g. a TrainingTemplate's name): the messages of an unfinished create (several
   * matches, none, no lookup) name it.
   */
  lookupKey?(obj: T): LookupKey;
  /**
   * The ids of every remote resource of the kind, from a walk of its whole list that
   * started when this is called or later (shared by the callers meanwhile), and whether
   * the walk was complete; undefined when no list operation is configured or the walk
   * failed. The
   * evidence that a bound resource was deleted outside the cluster when its detail read
   * fails without a 404 envelope (gone-evidence.ts).
   */
  listIds?(call: ManagedCall<T, Refs>): Promise<ListedIds | undefined>;
  /**
   * The routine poll of a settled object, answered from a walk of the kind's list that is
   * less than `maxAgeMs` old and shared by every object of the kind (one list walk per
   * poll interval instead of one detail read per object). Undefined sends the loop to
   * `observe`: the list is disabled, missing or failed, the id is not in it, the listed
   * record lacks a field the status needs, or it shows a change to make. A failed list
   * walk answers undefined; what this throws fails the reconcile (the loop does not
   * hide it behind the detail read).
   */
  observeFromList?(
    call: ManagedCall<T, Refs>,
    externalId: string,
    maxAgeMs: number,
  ): Promise<ListedObservation<R> | undefined>;
  /** Makes the remote resource match the spec; called when `observe` says not up to date. */
  update(call: ManagedCall<T, Refs>, externalId: string, remote: R): Promise<UpdateResult>;
  /**
   * Whether `delete` would reach the service (its operation is configured); absent
   * means yes. Read on every status write to tell the user, before the object is
   * deleted, whether a Delete policy can be honoured.
   */
  deleteConfigured?(): boolean;
  /**
   * Steps before `delete` (deletionPolicy Delete), e.g. "detach, then wait until
   * detached": called on every reconcile of the deleted object until it answers "Done",
   * then `delete` follows in the same reconcile. Must be idempotent (a detach already
   * sent is not sent again). Not called again once `delete` answered "InProgress".
   */
  beforeDelete?(call: ManagedCall<T, Refs>, externalId: string): Promise<BeforeDeleteResult>;
  /**
   * Deletes the remote resource (deletionPolicy Delete); "NotConfigured" when
   * impossible, "InProgress" when the service deletes asynchronously (see
   * {@link DeleteResult}). Called once per deletion: the loop records the request.
   */
  delete?(call: ManagedCall<T, Refs>, externalId: string): Promise<DeleteResult>;
  /**
   * The owner mark the remote record carries (written by `create`), or undefined when it
   * carries none. Kinds without it skip the ownership check (managed/tenancy.ts).
   */
  ownerOf?(remote: R): OwnerMark | undefined;
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
}

/** Everything the generic loop needs to know about a kind. */
export interface ManagedKind<T extends ManagedObject, R, Refs = unknown> {
  /** The reconciled kind. */
  resource: ResourceDescriptor;
  /** The finalizer the loop adds before any remote call. */
  finalizer: string;
  client: ExternalClient<T, R, Refs>;
  /**
   * The reference resolution step, run on every reconcile of a live object before
   * anything remote (crossplane-runtime's ReferenceResolver): reads the objects `obj`
   * refers to (`read`: the cache, in the object's namespace) and answers what the
   * client needs from them (`call.refs`), or why the object must wait. The loop writes
   * ReferencesResolved (True `Resolved`, or False with the answered reason); while
   * unresolved it creates nothing (Ready and Synced False with the reason) and sends no
   * update to an existing resource (Synced False), but still observes it. The
   * controller's `references` watches requeue the object when a referenced one changes.
   * Pure and cheap: no remote call.
   */
  resolveReferences?(obj: T, read: ReferenceReader): ReferenceResolution<Refs>;
  /**
   * The references are inputs of the create only (e.g. a TrainingJob's template): once
   * the object is bound to a remote resource they are not resolved again, `call.refs`
   * is undefined and ReferencesResolved stays True.
   */
  referencesForCreateOnly?: boolean;
  /**
   * The kind's status besides `conditions` and `observedGeneration`: built from the
   * facts and the remote record (undefined when not observed in this reconcile: keep
   * the previous remote fields from `obj.status`).
   */
  status(obj: T, facts: ManagedFacts, remote: R | undefined): Record<string, unknown>;
  /** The remote id the object's status records (written only after a verified binding). */
  statusId?(obj: T): string | undefined;
  /**
   * Conditions of the kind besides Ready, Synced and ReferencesResolved (e.g.
   * TrainingJob's Succeeded), set on
   * every status write of a live object (times and generation filled in by the loop);
   * `ready` is the Ready condition being written, `remote` the record observed in this
   * reconcile (if any); `{ type, remove: true }` removes a condition.
   */
  conditions?(
    call: ManagedCall<T, Refs>,
    ready: ReadyState,
    remote: R | undefined,
  ): (ConditionInput | { type: string; remove: true })[];
}

/** Tunables of the loop. */
export interface ManagedOptions {
  /** Requeue while the resource exists (the poll interval of the kind). */
  pollIntervalMs: number;
  /** First requeue while a subscription is pending; doubles with its age up to `pollIntervalMs`. */
  subscriptionPollMs?: number;
  /**
   * The list visibility window (`service.listVisibilityWindowMs`): how long after a
   * create a resource may be missing from the list. A create whose outcome is unknown is
   * looked up this long (see decideAfterLookup); absence from the list counts as
   * deletion only after it (gone-evidence.ts). Default 10 min.
   */
  visibilityGraceMs?: number;
  /** `adoption.namespaces` of the operator config (managed/tenancy.ts); default none. */
  adoptionNamespaces?: readonly string[];
}
