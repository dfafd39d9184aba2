/**
 * What the calls of one piece of work carry to the service client, explicitly: the
 * caller makes the account's calls for it (`ServiceAccount.withCall`, or a client view:
 * `ServiceClient.withCall`) and every call of those is made under it. The operator's
 * loops make one per reconcile.
 */

/** How the calls of one piece of work (a reconcile) are made. */
export interface CallContext {
  /**
   * Routine observation of a settled object (its poll, the list walks it starts, a
   * catalog refresh on its interval): the calls wait at the rate limit behind every
   * other call and take the routine budget (`routineShare`). A create, an update, a
   * follow-up read of an object still settling and a reconcile the user asked for are
   * never routine.
   */
  readonly routine: boolean;
  /**
   * Not routine, and no hurry either: a follow-up read of an object Ready and still
   * settling (a TrainingJob's pods after its first look). Its calls wait at the rate
   * limit behind calls with work to do, without the routine budget.
   */
  readonly followUp?: boolean;
  /**
   * Aborted when the work is abandoned (a reconcile past its deadline, or shutdown):
   * its calls stop their attempts and backoffs at once. Undefined: never aborted.
   */
  readonly signal?: AbortSignal | undefined;
}

/** Calls made outside any reconcile: not routine, never aborted. */
export const UNSCOPED_CALLS: CallContext = Object.freeze({ routine: false });
