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
 * list operation (`ExternalClient.listIds`).
 */
import { ServiceAuthError, ServiceError } from "../../service/errors.js";
import type { ListedIds } from "../../service/pagination.js";
import type { ManagedCall, ManagedFacts, ManagedObject } from "./call.js";

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

/** Complete listings in a row without the resource before it counts as gone. */
export const ABSENT_LISTINGS_FOR_GONE = 2;

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
