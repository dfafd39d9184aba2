/**
 * The client of one kind's remote resource, as the managed loop (reconciler.ts) drives
 * it: crossplane-runtime's four methods, {@link ExternalClient}, and small opt-in parts a
 * kind implements only when it has what they need ({@link KindClient}). A client sees
 * its object, its resolved references and its account's service (handed by
 * `ManagedKind.connect`), never the Kubernetes client or the cache; the loop owns the
 * finalizer, the crash-safe create protocol, deletion policy, conditions, events,
 * status writes and requeues.
 *
 * The kind itself, {@link ManagedKind}, says what else the loop needs: its resource,
 * finalizer, references, status, and `connect` (crossplane-runtime's Connect).
 *
 * Every method may throw: a service error (its `retryable` decides backoff or a terminal
 * hold), or a `RetryableError` / `TerminalError` with a PascalCase reason. The loop
 * turns it into Synced=False and a Warning event. Methods never write the object's
 * status, and write only their kind's own annotations (`ManagedCall.annotate`).
 */
import type { ConditionInput } from "../../runtime/object-writes.js";
import type { ResourceDescriptor } from "../../runtime/resource.js";
import type { AccountCalls } from "../../service/account.js";
import type { ListedIds } from "../../service/pagination.js";
import type { ResolvedConnection } from "../connections/client.js";
import type { EventReason } from "../event-reasons.js";
import type {
  BeforeDeleteResult,
  CreateResult,
  DeleteResult,
  ListedObservation,
  LookupKey,
  ManagedCall,
  ManagedFacts,
  ManagedObject,
  Observation,
  OwnerMark,
  PreflightRefusal,
  ReadyState,
  ReferenceReader,
  ReferenceResolution,
  ResolvedCall,
  SentCreate,
  SubscriptionPoll,
  UnreadMark,
  UpdateResult,
} from "./call.js";

/**
 * The secret part of a kind's connection details: the Secret's data (plain text, encoded
 * on the way), or why it may not be written (`reason` of the Event when a Secret written
 * before is deleted).
 */
export type SecretDetails =
  | { data: Record<string, string> }
  | { refused: string; reason: EventReason };

/** The four methods every kind's client has (crossplane-runtime's ExternalClient). */
export interface ExternalClient<T extends ManagedObject, R, Refs = unknown> {
  /** Reads the remote resource `externalId`; `{ exists: false }` when it is gone. */
  observe(call: ManagedCall<T, Refs>, externalId: string): Promise<Observation<R>>;
  /**
   * Creates the remote resource carrying `token` (so a {@link TokenLookup} can find it).
   * A thrown error whose `outcomeUnknown` is true means the create may have taken effect.
   */
  create(call: ResolvedCall<T, Refs>, token: string): Promise<CreateResult>;
  /** Makes the remote resource match the spec; called when `observe` says not up to date. */
  update(call: ManagedCall<T, Refs>, externalId: string, remote: R): Promise<UpdateResult>;
  /** Deletes the remote resource (deletionPolicy Delete); called once per deletion. */
  delete(call: ManagedCall<T, Refs>, externalId: string): Promise<DeleteResult>;
}

/** Opt-in: a create answers a subscription key to poll. */
export interface Subscriptions<T extends ManagedObject, Refs = unknown> {
  pollSubscription(call: ManagedCall<T, Refs>, key: string): Promise<SubscriptionPoll>;
}

/**
 * Opt-in: finding the resource of a create whose answer was lost. Without it, such a
 * create is reported CreateOutcomeUnknown at once.
 */
export interface TokenLookup<T extends ManagedObject, Refs = unknown> {
  /** Ids of remote resources of `create`; undefined when no list operation exists. */
  lookupByToken(call: ManagedCall<T, Refs>, create: SentCreate): Promise<string[] | undefined>;
  /** What the lookup recognises the resource by, when not the client token. */
  lookupKey?(obj: T): LookupKey;
  /**
   * One walk of the whole list, started now: "Absent" when it was complete, every
   * record carries the field the token travels in, and none carries `create`'s token;
   * "Undecided" otherwise (absence then proves nothing). Without it, a create the
   * lookup never finds stops as CreateOutcomeUnknown.
   */
  tokenAbsence?(call: ManagedCall<T, Refs>, create: SentCreate): Promise<TokenAbsence>;
}

/** What one walk of a kind's list says of a create's token ({@link TokenLookup.tokenAbsence}). */
export type TokenAbsence = "Absent" | "Undecided";

/** The verdict of a list walk that `proved` the token absent (undefined: no list). */
export function absenceVerdict(proved: boolean | undefined): TokenAbsence {
  return proved === true ? "Absent" : "Undecided";
}

/** Opt-in: the kind's list, as evidence that a resource is gone and for routine polls. */
export interface ListObservation<T extends ManagedObject, R, Refs = unknown> {
  /**
   * The ids of every remote resource of the kind, from a walk that started when this is
   * called or later, and whether it was complete; undefined when no list operation is
   * configured or the walk failed (gone-evidence.ts).
   */
  listIds?(call: ManagedCall<T, Refs>): Promise<ListedIds | undefined>;
  /**
   * The routine poll of a settled object answered from a walk of the list less than
   * `maxAgeMs` old, shared by every object of the kind; undefined sends the loop to
   * `observe`. What this throws fails the reconcile.
   */
  observeFromList?(
    call: ManagedCall<T, Refs>,
    externalId: string,
    maxAgeMs: number,
  ): Promise<ListedObservation<R> | undefined>;
}

/** Opt-in: a cheap existence check while a delete that answered "InProgress" goes on. */
export interface WaitingDelete<T extends ManagedObject, Refs = unknown> {
  exists(call: ManagedCall<T, Refs>, externalId: string): Promise<boolean>;
}

/**
 * Opt-in: steps before `delete` (e.g. "detach, then wait until detached"), called on
 * every reconcile of the deleted object until "Done"; must be idempotent.
 */
export interface BeforeDelete<T extends ManagedObject, Refs = unknown> {
  beforeDelete(call: ManagedCall<T, Refs>, externalId: string): Promise<BeforeDeleteResult>;
}

/** Opt-in: checks before an order is placed; nothing is ordered that could not finish. */
export interface OrderChecks<T extends ManagedObject, Refs = unknown> {
  /**
   * Resolves when the service answers every operation an order needs to finish and be
   * observed; throws otherwise (terminal, external, naming the operation).
   */
  requireOperations?(call: ManagedCall<T, Refs>): Promise<void>;
  /** Checks before the first create; a refusal is reported and nothing is ordered. */
  preflight?(call: ResolvedCall<T, Refs>): Promise<PreflightRefusal | undefined>;
  /**
   * Annotations the create relies on, written in the pending marker's one write: a
   * write between the marker and the call, failed or cut short, would leave a marker
   * whose create was never sent, looked up for the whole visibility window.
   */
  pendingAnnotations?(call: ResolvedCall<T, Refs>): Record<string, string>;
}

/** Opt-in: the owner mark the remote record carries (tenancy.ts); absent: not checked. */
export interface Ownership<R> {
  ownerOf(remote: R): OwnerMark | UnreadMark | undefined;
}

/**
 * Opt-in: whether `delete` would reach the service (its operation is configured);
 * absent means yes. Read on every status write (the DeletionPolicy condition).
 */
export interface DeleteOperation {
  deleteConfigured(): boolean;
}

/** A kind's client: the four methods, and any of the opt-in parts. */
export type KindClient<T extends ManagedObject, R, Refs = unknown> = ExternalClient<T, R, Refs> &
  Partial<
    Subscriptions<T, Refs> &
      TokenLookup<T, Refs> &
      WaitingDelete<T, Refs> &
      BeforeDelete<T, Refs> &
      Ownership<R> &
      DeleteOperation
  > &
  ListObservation<T, R, Refs> &
  OrderChecks<T, Refs>;

/**
 * The account a kind's client talks to: the object's ServiceConnection, else the
 * operator's default connection (connections/registry.ts), with `service` the calls of
 * one reconcile on it (each kind's operations module: `service.nas`...).
 */
export type Connection = Omit<ResolvedConnection, "service"> & { service: AccountCalls };

/** Everything the managed loop needs to know about a kind. */
export interface ManagedKind<T extends ManagedObject, R, Refs = unknown> {
  /** The reconciled kind. */
  resource: ResourceDescriptor;
  /** The finalizer the loop adds before any remote call. */
  finalizer: string;
  /**
   * The kind's client for the account `conn` (crossplane-runtime's Connect), asked once
   * per reconcile; what it remembers across reconciles it keeps per account
   * (account-memory.ts), so it stays with the account it came from.
   */
  connect(conn: Connection): KindClient<T, R, Refs>;
  /** An id in the spec that binds the object to an existing resource (adoption), if any. */
  adoptId?(obj: T): string | undefined;
  /**
   * The reference resolution step, run on every reconcile of a live object before
   * anything remote (crossplane-runtime's ReferenceResolver): reads the objects `obj`
   * refers to (`read`: the cache, in the object's namespace) and answers what the
   * client needs from them (`call.refs`), or why the object must wait. The loop writes
   * ReferencesResolved; while unresolved it creates nothing and sends no update, but
   * still observes. Pure and cheap: no remote call.
   */
  resolveReferences?(obj: T, read: ReferenceReader): ReferenceResolution<Refs>;
  /**
   * The references are inputs of the create only (e.g. a TrainingJob's template): once
   * the object is bound they are not resolved again, `call.refs` is undefined and
   * ReferencesResolved stays True.
   */
  referencesForCreateOnly?: boolean;
  /**
   * The kind's status besides `conditions` and `observedGeneration`, built from the
   * facts and the remote record (undefined when not observed in this reconcile: keep
   * the previous remote fields from `obj.status`).
   */
  status(obj: T, facts: ManagedFacts, remote: R | undefined): Record<string, unknown>;
  /**
   * The status fields `status` derives from the facts (the id, the subscription, the
   * phase). A kind that names them leaves the rest to the loop: when nothing was
   * observed, the loop keeps every other field of the previous status (the remote
   * record as last seen) and `status` (`remote` undefined) writes only these.
   */
  factFields?: readonly string[];
  /**
   * The connection details of the object for `spec.exportTo` (export.ts), from the
   * status just written: ConfigMap keys to values. A kind without it has no exportTo.
   */
  exportValues?(obj: T, status: Record<string, unknown>): Record<string, string>;
  /**
   * The secret connection details for `spec.exportTo.secretName` (export.ts): Secret keys
   * to values, or why the object's connection does not allow writing them. The loop
   * records the name in the status as `exportedSecretName` (so that a rename deletes
   * the old Secret after a restart too).
   */
  exportSecretValues?(obj: T): Promise<SecretDetails>;
  /**
   * The unset spec fields `remote` can fill (spec.managementPolicies LateInitialize), as
   * a merge patch of the spec; undefined or empty when there is nothing to fill. Pure.
   */
  lateInitialize?(obj: T, remote: R): Record<string, unknown> | undefined;
  /**
   * The spec fields the service cannot change whose value `remote` contradicts (each
   * with both values): set in the spec, known in the record, and different; the spec's
   * id too when it is not `boundId` (set after the object was bound, it cannot take
   * effect). Asked of an adopted resource only (the spec's id, or another's resource by
   * the external-id annotation: tenancy.ts, boundByHand), which may have been made
   * otherwise. Pure; see fixed-fields.ts.
   */
  fixedFields?(obj: T, remote: R, boundId: string): FixedFieldDiff[];
  /** The remote id the object's status records (written only after a verified binding). */
  statusId?(obj: T): string | undefined;
  /**
   * Conditions besides Ready, Synced and ReferencesResolved (e.g. TrainingJob's
   * Succeeded), set on every status write of a live object; `ready` is the Ready
   * condition being written, `remote` the record observed in this reconcile (if any);
   * `{ type, remove: true }` removes a condition.
   */
  conditions?(
    call: ManagedCall<T, Refs>,
    ready: ReadyState,
    remote: R | undefined,
  ): (ConditionInput | { type: string; remove: true })[];
}

/** A spec field the service cannot change whose remote value differs (ManagedKind.fixedFields). */
export interface FixedFieldDiff {
  field: string;
  spec: unknown;
  remote: unknown;
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
   * looked up this long; absence from the list counts as deletion only after it
   * (gone-evidence.ts). Default 10 min.
   */
  visibilityGraceMs?: number;
  /** `adoption.namespaces` of the operator config (tenancy.ts); default none. */
  adoptionNamespaces?: readonly string[];
  /**
   * `service.recreateLostCreates`: after the window, create again a create the list
   * proves absent ({@link TokenLookup.tokenAbsence}, lookup.ts). Default true.
   */
  recreateLostCreates?: boolean;
  /** `reconcileTimeoutMs` (0: none), which bounds when a create goes out (create-recovery.ts). */
  reconcileTimeoutMs?: number | undefined;
  /** The request timeout of the kind's client (`service.timeoutMs`). Default 10 s. */
  requestTimeoutMs?: number | undefined;
}
