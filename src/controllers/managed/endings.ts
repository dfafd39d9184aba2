/**
 * The outcomes that end a live reconcile without a remote answer to show, built by the
 * dispatcher (reconciler.ts) from a step's `Refused` or `Unknown`, or from a create
 * that failed for this generation.
 */
import { conditionMessage } from "../../runtime/object-writes.js";
import type { ManagedObject } from "./call.js";
import { ANNOTATIONS, policiesText } from "./decisions.js";
import type { ManagedOptions } from "./external-client.js";
import { type ManagedRun, type Outcome, SYNCED_OK } from "./run.js";
import type { BindingRefusal } from "./tenancy.js";

/**
 * A refused binding: Ready and Synced False with the terminal reason, the previous
 * status kept (so no remote id is recorded), and a look again after the poll interval
 * (an earlier binder may go away). The Warning event is sent when the refusal is new.
 */
export function refused<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  refusal: BindingRefusal,
  options: ManagedOptions,
): Outcome<R> {
  const prev = run.obj.status?.conditions?.find((c) => c.type === "Ready");
  if (prev?.reason !== refusal.reason || prev.message !== conditionMessage(refusal.message)) {
    run.warning(refusal.reason, refusal.message);
  }
  const cond = { status: "False" as const, ...refusal };
  return {
    facts: run.facts(),
    ready: cond,
    synced: cond,
    keepStatus: true,
    requeueAfterMs: options.pollIntervalMs,
    priority: "low",
  };
}

/** Message of the CreateOutcomeUnknown condition and event: what the user can do. */
export const OUTCOME_UNKNOWN_HELP = `Check the service: if the resource exists, adopt it by setting the annotation ${ANNOTATIONS.externalId} to its id; if it does not, create it again by removing the annotation ${ANNOTATIONS.createPending}.`;

/**
 * A create whose outcome cannot be known (`why`): Ready and Synced False
 * CreateOutcomeUnknown, with what the user can do and the kubectl commands for it.
 */
export function unknownOutcome<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  why: string,
): Outcome<R> {
  const ref = `${run.kind.resource.kind.toLowerCase()}/${run.obj.metadata?.name ?? ""}`;
  const help = `${OUTCOME_UNKNOWN_HELP} (kubectl annotate ${ref} ${ANNOTATIONS.externalId}=<id>, or kubectl annotate ${ref} ${ANNOTATIONS.createPending}-)`;
  const message = `${why}. ${help}`;
  run.warning("CreateOutcomeUnknown", message);
  const cond = { status: "False" as const, reason: "CreateOutcomeUnknown" as const, message };
  return { facts: run.facts(), ready: cond, synced: cond };
}

/**
 * A create that failed remotely for this generation: Ready=False CreateFailed with the
 * message the failure wrote, the status kept; a newer generation tries again.
 */
export function createFailed<T extends ManagedObject, R>(run: ManagedRun<T, R>): Outcome<R> {
  const prev = run.obj.status?.conditions?.find((c) => c.type === "Ready");
  return {
    facts: run.facts(),
    ready: {
      status: "False",
      reason: "CreateFailed",
      message: prev?.reason === "CreateFailed" ? prev.message : "the create failed",
    },
    synced: SYNCED_OK,
    keepStatus: true,
  };
}

/**
 * An object with no remote resource whose spec.managementPolicies has no Create:
 * Ready=False RemoteNotFound (terminal), nothing ordered; binding an id or adding Create
 * is a change that reconciles it again.
 */
export function withoutCreate<T extends ManagedObject, R>(run: ManagedRun<T, R>): Outcome<R> {
  const where = run.kind.adoptId ? "the kind's id field in the spec or " : "";
  return {
    facts: run.facts(),
    ready: {
      status: "False",
      reason: "RemoteNotFound",
      message: `no remote resource is bound and spec.managementPolicies ${policiesText(run.obj)} has no Create, so none is ordered: set ${where}the annotation ${ANNOTATIONS.externalId} to the id of an existing resource, or add Create`,
    },
    synced: SYNCED_OK,
    keepStatus: true,
  };
}
