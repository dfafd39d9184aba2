/**
 * The way out of the create protocol when its outcome cannot be known (a subscription
 * that succeeded without naming the resource, a client token found on several or on no
 * resource long after the create): Ready and Synced False CreateOutcomeUnknown, with
 * what the user can do.
 */

import type { ManagedObject } from "./call.js";
import { ANNOTATIONS } from "./create-protocol.js";
import type { Outcome } from "./outcome.js";
import { factsOf, type ManagedRun } from "./run.js";

/** Message of the CreateOutcomeUnknown condition and event: what the user can do. */
export const OUTCOME_UNKNOWN_HELP = `Check the service: if the resource exists, adopt it by setting the annotation ${ANNOTATIONS.externalId} to its id; if it does not, create it again by removing the annotation ${ANNOTATIONS.createPending}.`;

/** {@link OUTCOME_UNKNOWN_HELP} with the kubectl commands for `obj`. */
function outcomeUnknownHelp(kind: string, name: string): string {
  const ref = `${kind.toLowerCase()}/${name}`;
  return `${OUTCOME_UNKNOWN_HELP} (kubectl annotate ${ref} ${ANNOTATIONS.externalId}=<id>, or kubectl annotate ${ref} ${ANNOTATIONS.createPending}-)`;
}

/** The CreateOutcomeUnknown outcome of `run`, `why` followed by what the user can do. */
export function unknownOutcome<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  why: string,
): Outcome<R> {
  const message = `${why}. ${outcomeUnknownHelp(run.kind.resource.kind, run.obj.metadata?.name ?? "")}`;
  run.warning("CreateOutcomeUnknown", message);
  const cond = { status: "False" as const, reason: "CreateOutcomeUnknown" as const, message };
  return { facts: factsOf(run), ready: cond, synced: cond };
}
