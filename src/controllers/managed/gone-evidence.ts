/**
 * Evidence from the list that a bound remote resource was deleted outside the cluster,
 * for a service that does not answer a detail read of an unknown id with a 404 envelope
 * (e.g. a 500, since the spec shows no other error). When the detail read of a bound
 * resource fails with an answer of the service, the kind's list is consulted: a walk of
 * the whole list that started after the read failed (one walk shared by every object
 * whose read failed meanwhile, list-snapshot.ts, not one per object). Absent
 * from {@link ABSENT_LISTINGS_FOR_GONE} complete listings in a row (each page read, as
 * many distinct records as the service counts), and past the list visibility window
 * since its create, the resource counts as gone. One mechanism for every kind with a
 * list operation (`ExternalClient.listIds`). Within that window, an unknown id the
 * operator ordered and never read is not known yet rather than gone (`notShownYet`).
 */
import { errorMessage } from "../../runtime/errors.js";
import { getCondition } from "../../runtime/object-writes.js";
import { DEFAULT_LIST_VISIBILITY_WINDOW_MS } from "../../service/defaults.js";
import { ServiceAuthError, ServiceError } from "../../service/errors.js";
import type { ListedIds } from "../../service/pagination.js";
import type { ManagedCall, ManagedFacts, ManagedObject, SentCreate } from "./call.js";
import { ANNOTATIONS, type CreatePending } from "./decisions.js";

/**
 * Per object (its uid, else its name): the bound id whose detail read failed and the
 * complete listings in a row that lacked it. The loop keeps one per kind
 * (reconciler.ts) and drops an object's entry when a read of the resource is
 * answered (`ManagedRun.forgetAbsences`), so only a failing read reaches this file.
 */
export type Absences = Map<string, { id: string; listings: number }>;

/** What the evidence is gathered for: one object of a kind (a ManagedRun). */
export interface EvidenceSubject<T extends ManagedObject> {
  /** The absences of the object's kind. */
  readonly absences: Absences;
  /** The key of the object in {@link absences}. */
  readonly absenceKey: string;
  readonly call: ManagedCall<T, unknown>;
  /** The kind's client; its list of ids (`ListObservation.listIds`, external-client.ts). */
  readonly client: { listIds?(call: ManagedCall<T, unknown>): Promise<ListedIds | undefined> };
  facts(): ManagedFacts;
  ageOf(at: string): number;
}

/**
 * How long after its create a resource may be missing from the list or unknown to its
 * detail read: `visibilityGraceMs` (service.listVisibilityWindowMs), else the default.
 */
export function visibilityWindowMs(options: { visibilityGraceMs?: number | undefined }): number {
  return options.visibilityGraceMs ?? DEFAULT_LIST_VISIBILITY_WINDOW_MS;
}

/** Complete listings in a row without the resource before it counts as gone. */
export const ABSENT_LISTINGS_FOR_GONE = 2;

/** Per object and token: complete listings in a row that proved the create absent. */
const absentCounts = new Map<string, number>();

/**
 * Complete listings in a row, this one included, in which the kind's list proves the
 * create `pending` of `run`'s object never made (`TokenLookup.tokenAbsence`,
 * external-client.ts): 0 when this one does not (the resource is listed, a record lacks
 * the token's field, the kind cannot tell, no token); `proven` at
 * {@link ABSENT_LISTINGS_FOR_GONE}, when the count starts anew.
 */
export async function absentListings<T extends ManagedObject>(
  run: {
    obj: T;
    call: ManagedCall<T, unknown>;
    client: { tokenAbsence?(call: ManagedCall<T, unknown>, create: SentCreate): Promise<string> };
  },
  pending: CreatePending | undefined,
): Promise<{ listings: number; proven: boolean }> {
  if (!pending?.token) return { listings: 0, proven: false };
  const id = `${run.obj.metadata?.uid ?? run.obj.metadata?.name}/${pending.token}`;
  const verdict = await run.client.tokenAbsence?.(run.call, pending);
  const listings = verdict === "Absent" ? (absentCounts.get(id) ?? 0) + 1 : 0;
  const proven = listings >= ABSENT_LISTINGS_FOR_GONE;
  if (listings > 0 && !proven) absentCounts.set(id, listings);
  else absentCounts.delete(id);
  return { listings, proven };
}

/** What the list says about a resource whose detail read failed. */
export type ListEvidence =
  /** No evidence (no list operation, the list failed or was incomplete, or it lists the resource). */
  | { verdict: "None" }
  /** Absent, but not yet often or long enough to count as gone: look again soon. */
  | { verdict: "Absent"; listings: number }
  /** Gone: absent from enough complete listings, past the visibility window. */
  | { verdict: "Gone"; listings: number };

/**
 * Whether a failed detail read may mean that the resource does not exist: the service
 * answered (not a network failure), and neither refused the key nor asked to slow down.
 */
export function readFailureMayMeanGone(err: unknown): boolean {
  return (
    err instanceof ServiceError &&
    err.code !== undefined &&
    err.code !== 429 &&
    !(err instanceof ServiceAuthError)
  );
}

/**
 * Consults the kind's list after the detail read of `id` failed with `err`.
 * `visibilityWindowMs`: how long after its create a resource may be missing from the
 * list (counted from the create's submittedTime in status; unknown counts as long ago).
 */
export async function listEvidence<T extends ManagedObject>(
  run: EvidenceSubject<T>,
  id: string,
  err: unknown,
  visibilityWindowMs: number,
): Promise<ListEvidence> {
  const client = run.client;
  if (!client.listIds || !readFailureMayMeanGone(err)) return { verdict: "None" };
  const { absences, absenceKey } = run;
  let listed: Awaited<ReturnType<NonNullable<typeof client.listIds>>>;
  try {
    listed = await client.listIds(run.call);
  } catch {
    // A list that fails too says nothing; the detail read's error is reported.
    return { verdict: "None" };
  }
  if (!listed?.complete || listed.ids.has(id)) {
    absences.delete(absenceKey);
    return { verdict: "None" };
  }
  const last = absences.get(absenceKey);
  const listings = (last?.id === id ? last.listings : 0) + 1;
  absences.set(absenceKey, { id, listings });
  const submitted = run.facts().subscription?.submittedTime;
  const age = submitted ? run.ageOf(submitted) : Number.POSITIVE_INFINITY;
  const pastWindow = !(age < visibilityWindowMs);
  return listings >= ABSENT_LISTINGS_FOR_GONE && pastWindow
    ? { verdict: "Gone", listings }
    : { verdict: "Absent", listings };
}

/**
 * {@link listEvidence} for a deletion after `failed` (a read of `id`, a step before its
 * delete) failed with `err`: "Gone", the message of a wait while the resource is absent
 * too briefly, or undefined without evidence (the failure stands). `mayBeUnseen`: the
 * window applies to a resource ordered and never read ({@link notShownYet}).
 */
export async function goneByList<T extends ManagedObject>(
  run: EvidenceSubject<T> & UnseenSubject<T>,
  id: string,
  err: unknown,
  options: { visibilityGraceMs?: number | undefined },
  failed: string,
  mayBeUnseen: boolean,
): Promise<"Gone" | string | undefined> {
  const unseen = mayBeUnseen && notShownYet(run, id, options) !== undefined;
  const listed = await listEvidence(run, id, err, unseen ? visibilityWindowMs(options) : 0);
  if (listed.verdict === "None") return undefined;
  if (listed.verdict === "Gone") return "Gone";
  return `deleting the remote resource ${id}: ${failed} (${errorMessage(err)}) and it is absent from ${listed.listings} complete listing(s) in a row, looking again`;
}

/** What {@link notShownYet} asks of an object: a ManagedRun. */
export interface UnseenSubject<T extends ManagedObject> {
  readonly obj: T;
  /** The id the spec names (an adoption), if any. */
  readonly adoptId: string | undefined;
  facts(): ManagedFacts;
  ageOf(at: string): number;
}

/**
 * Why an unknown-id answer for `id` is no evidence yet that the resource is gone, else
 * undefined: the operator ordered it (an id the spec names was not) at `submittedTime`
 * (default: the status's), less than the visibility window ago, and has not read it
 * since (Ready still Creating). The spec does not say when an ordered resource can be
 * read, and a service may answer its order's result before its detail knows it.
 */
export function notShownYet<T extends ManagedObject>(
  run: UnseenSubject<T>,
  id: string,
  options: { visibilityGraceMs?: number | undefined },
  submittedTime = run.facts().subscription?.submittedTime,
): string | undefined {
  if (run.adoptId === id || !submittedTime) return undefined;
  if (!(run.ageOf(submittedTime) < visibilityWindowMs(options))) return undefined;
  const ready = getCondition(run.obj.status?.conditions, "Ready");
  if (ready && ready.reason !== "Creating") return undefined;
  return `the service does not know the new remote resource ${id} yet (ordered at ${submittedTime}); looking again`;
}

/**
 * What to do about a bound remote resource that does not exist: an id from the spec
 * (adoption, e.g. NasVolume.spec.storageId) cannot be removed, so the object must be
 * deleted and created anew; an id the operator recorded is dropped by removing its
 * annotation and its create's records, and the next reconcile creates a new resource.
 */
export function remoteNotFound<T extends ManagedObject>(
  run: UnseenSubject<T>,
  externalId: string,
): string {
  if (run.adoptId === externalId) {
    return `the remote resource ${externalId} named in the spec does not exist; the spec cannot drop it (the field may only be set once), so delete this object and create a new one, with the id of an existing resource or without one to order a new resource`;
  }
  return `the remote resource ${externalId} does not exist (deleted outside the cluster?); to create a new one, remove ${bindingRecords(run.obj)}, or delete this object`;
}

/**
 * The annotations that bind an object to its remote resource, with the command that
 * removes them: the id, and the records of the create that made it (its subscription
 * key, its marker), from which the id would be found again.
 */
function bindingRecords(obj: ManagedObject): string {
  const present = obj.metadata?.annotations ?? {};
  const names = [ANNOTATIONS.externalId, ANNOTATIONS.subscriptionKey, ANNOTATIONS.createPending];
  const records = names.filter((n) => n === ANNOTATIONS.externalId || n in present);
  const ref = `${(obj.kind ?? "").toLowerCase()}/${obj.metadata?.name ?? ""}`;
  const command = `kubectl -n ${obj.metadata?.namespace ?? ""} annotate ${ref} ${records.map((n) => `${n}-`).join(" ")}`;
  if (records.length === 1) return `the annotation ${records[0]} (${command})`;
  return `the annotations ${records.join(", ")} (${command}): the create's records would bind it again`;
}
