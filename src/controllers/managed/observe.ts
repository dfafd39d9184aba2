/**
 * The Observe step, observe → update, the last step of a live managed object. A failed
 * detail read is checked against the kind's list (gone-evidence.ts): a resource absent
 * from complete listings is gone, whatever the service answers for it. A record whose
 * owner mark refuses the object answers Refused, before anything is changed.
 */
import { REASONS } from "../../crds/index.js";
import type { ConditionReason } from "../../crds/reasons.js";
import { errorMessage, errorReason, RetryableError } from "../../runtime/errors.js";
import { patchSpec } from "../../runtime/lifecycle-writes.js";
import { getCondition } from "../../runtime/object-writes.js";
import type { ManagedFacts, ManagedObject, Observation, ReadyState } from "./call.js";
import { managedSettled, policiesText } from "./decisions.js";
import type { ManagedOptions } from "./external-client.js";
import { withFixedFields } from "./fixed-fields.js";
import { listEvidence, notShownYet, remoteNotFound, visibilityWindowMs } from "./gone-evidence.js";
import {
  creatingReady,
  done,
  ERR,
  firstSubscriptionPollMs,
  type ManagedRun,
  type Next,
  type Subscription,
  SYNCED_OK,
  soonPollMs,
  step,
  wrapError,
} from "./run.js";
import { boundByHand, ownershipRefusal } from "./tenancy.js";

/**
 * The routine poll of a settled object answered from the kind's list snapshot (one walk
 * per poll interval for every object of the kind), or undefined for the detail read. The
 * next poll is due when the snapshot turns one poll interval old, so a remote change
 * shows within one poll interval, as with detail reads.
 */
async function fromList<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  externalId: string,
  options: ManagedOptions,
  facts: ManagedFacts,
): Promise<Next<R> | undefined> {
  const { client } = run;
  // A reconcile the user asked for (aidc.io/reconcile-requested-at) reads in detail.
  if (run.reconcileRequest !== undefined) return undefined;
  if (!client.observeFromList || !managedSettled(run.obj)) return undefined;
  const poll = options.pollIntervalMs;
  // A failed list walk answers undefined (the detail read follows and reports); what is
  // thrown here is the kind's own failure, reported as the observe step's.
  const listed = await step(ERR.observe, async () =>
    client.observeFromList?.(run.call, externalId, poll),
  );
  if (!listed) return undefined;
  run.forgetAbsences();
  const { remote, ready } = listed.observation;
  const refusal = ownershipRefusal(run.client, run.kind, run.obj, externalId, remote, options);
  if (refusal) return { step: "Refused", refusal };
  const age = run.ctx.clock.now().getTime() - listed.fetchedAt;
  announceReady(run, ready);
  return done({
    facts,
    remote,
    ready,
    synced: SYNCED_OK,
    requeueAfterMs: Math.min(poll, Math.max(MIN_LISTED_REQUEUE_MS, poll - age)),
    priority: "low",
  });
}

/** LateInitialize: unset spec fields the kind fills from `remote` (the loop's only spec write). */
async function lateInitialize<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  remote: R,
): Promise<void> {
  if (!run.policies.lateInitialize || !run.kind.lateInitialize) return;
  const fields = run.kind.lateInitialize(run.obj, remote);
  if (!fields || Object.keys(fields).length === 0) return;
  // A spec the user changed meanwhile is not overwritten: a conflict, retried on it.
  run.obj = await patchSpec(run.ctx.kube, run.kind.resource, run.obj, fields);
  run.normal(
    "LateInitialized",
    `filled unset spec fields from the remote resource: ${Object.entries(fields)
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .join(", ")}`,
  );
}

/**
 * An Event when Ready turns to a reason a person must hear of: a Warning for a Terminal
 * one (a failed task, a resource gone), a Normal one for a Resting one (a stopped task);
 * once per change of the Ready reason.
 */
function announceReady<T extends ManagedObject, R>(run: ManagedRun<T, R>, ready: ReadyState) {
  if (getCondition(run.obj.status?.conditions, "Ready")?.reason === ready.reason) return;
  const state = REASONS.stateOf(ready.reason);
  const note = ready.message || `the remote resource is ${ready.reason}`;
  if (state === "Terminal") run.warning(ready.reason, note);
  else if (state === "Resting") run.normal(ready.reason, note);
}

/** Synced=False when the policies forbid Update: the kind's refusal, else DriftDetected. */
function driftDetected<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  differs: readonly string[] | undefined,
  refused?: { reason: ConditionReason; message: string },
): ReadyState {
  const what = differs?.length
    ? `differs from the spec in ${differs.join(", ")}`
    : "differs from the spec";
  const drift = `the remote resource ${what}; spec.managementPolicies ${policiesText(run.obj)} has no Update, so it is not changed`;
  // A refusal is said as such (as with Update): it is no drift, whatever the policies.
  if (refused) {
    const also = differs?.length ? `; also, ${drift}` : "";
    return { status: "False", reason: refused.reason, message: refused.message + also };
  }
  return { status: "False", reason: "DriftDetected", message: drift };
}

/** The shortest wait before the next poll of an object answered from the list. */
const MIN_LISTED_REQUEUE_MS = 10;

/** The detail read of `externalId`, or its absence as the list shows it. */
async function readRemote<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  externalId: string,
  options: ManagedOptions,
): Promise<{ o: Observation<R>; evidence: string }> {
  try {
    const o = await run.client.observe(run.call, externalId);
    run.forgetAbsences();
    return { o, evidence: "" };
  } catch (err) {
    const window = visibilityWindowMs(options);
    const listed = await listEvidence(run, externalId, err, window);
    if (listed.verdict === "None") throw wrapError(ERR.observe, err);
    if (listed.verdict === "Absent") {
      // Retryable whatever the cause, so that the next listing follows.
      throw new RetryableError(
        errorReason(err, "ReconcileError"),
        `${ERR.observe}: ${errorMessage(err)}; absent from the list (${listed.listings} complete listing(s) in a row), looking again`,
        { cause: err },
      );
    }
    return {
      o: { exists: false },
      evidence: `its detail read fails (${errorMessage(err)}) and it is absent from ${listed.listings} complete listings in a row`,
    };
  }
}

/**
 * The read of a resource just bound, made while its binding write is on its way: a read
 * changes nothing, so it need not wait; everything after it waits for the binding. A
 * failed binding fails the step; the read's failure counts only once the binding is written.
 */
async function readWhileBinding<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  externalId: string,
  options: ManagedOptions,
  binding: Promise<unknown>,
): Promise<{ o: Observation<R>; evidence: string }> {
  const [bound, read] = await Promise.allSettled([binding, readRemote(run, externalId, options)]);
  if (bound.status === "rejected") throw bound.reason;
  if (read.status === "rejected") throw read.reason;
  return read.value;
}

/** Observes `externalId`, updated when the spec asks; `binding`: see {@link readWhileBinding}. */
export async function observe<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  externalId: string,
  options: ManagedOptions,
  subscription?: Subscription,
  binding?: Promise<unknown>,
): Promise<Next<R>> {
  let read: { o: Observation<R>; evidence: string } | undefined;
  if (binding) read = await readWhileBinding(run, externalId, options, binding);
  // The facts of the object as the binding left it.
  const facts = { ...run.facts(), ...(subscription ? { subscription } : {}) };
  if (!read) {
    const listed = await fromList(run, externalId, options, facts);
    if (listed) return listed;
    read = await readRemote(run, externalId, options);
  }
  let o = read.o;
  const evidence = read.evidence;
  const unseen =
    !o.exists && !evidence
      ? notShownYet(run, externalId, options, facts.subscription?.submittedTime)
      : undefined;
  if (unseen) {
    const ready = creatingReady(unseen);
    return done({ facts, ready, synced: SYNCED_OK, requeueAfterMs: soonPollMs(options) });
  }
  if (!o.exists) {
    const gone: ReadyState = {
      status: "False",
      reason: "RemoteNotFound",
      message: evidence
        ? `${remoteNotFound(run, externalId)}. Seen from the list: ${evidence}`
        : remoteNotFound(run, externalId),
    };
    announceReady(run, gone);
    return done({
      facts,
      ready: gone,
      synced: SYNCED_OK,
      requeueAfterMs: options.pollIntervalMs,
      priority: "low",
    });
  }
  // The owner mark, before anything is changed: another namespace's resource, or one the
  // operator did not create where adoption is not allowed, is refused. An id bound by
  // this reconcile (`binding`) came from the object's own create.
  const own = binding !== undefined;
  const refusal = ownershipRefusal(
    run.client,
    run.kind,
    run.obj,
    externalId,
    o.remote,
    options,
    own,
  );
  if (refusal) return { step: "Refused", refusal };
  await lateInitialize(run, o.remote);
  const first = firstSubscriptionPollMs(options);
  // Still coming up, or waiting to make a change: look again sooner than the poll interval.
  const soon = soonPollMs(options);
  let synced = SYNCED_OK;
  let requeueAfterMs = o.ready.reason === "Creating" ? soon : options.pollIntervalMs;
  const unresolved = run.unresolved;
  // Only an adopted resource may have been made otherwise; one the loop created was
  // made from this spec, however the service spells its values back. One the spec
  // misstates is likely another than meant: nothing of it is changed.
  const adopted = boundByHand(run.client, run.kind, run.obj, o.remote);
  const fixed = adopted ? run.kind.fixedFields?.(run.obj, o.remote, externalId) : undefined;
  if (!o.upToDate && !run.policies.update) {
    synced = driftDetected(run, o.differs, o.refused);
  } else if (!o.upToDate && unresolved) {
    // The change may depend on what does not resolve: it waits (ReferencesResolved says why).
    synced = {
      status: "False",
      reason: unresolved.reason,
      message: `the change waits for references: ${unresolved.message}`,
    };
  } else if (!o.upToDate && !fixed?.length) {
    const remote = o.remote;
    // A change is work, not observation: its calls and the read after it are not routine.
    run.changing();
    const u = await step(ERR.update, () => run.client.update(run.call, externalId, remote));
    if (u.outcome === "Applied") {
      run.normal("Updated", u.message);
      const again = await step(ERR.observe, () => run.client.observe(run.call, externalId));
      if (again.exists) o = again;
      // Sent but not shown yet: under way until a read shows it (kstatus: InProgress).
      if (!o.upToDate) synced = { status: "True", reason: "Updating", message: u.message };
      requeueAfterMs = first;
    } else if (u.outcome === "Waiting") {
      synced = { status: "True", reason: "Updating", message: u.message };
      requeueAfterMs = soon;
    } else {
      // Once: a poll that finds the same refusal (Synced says it) records no new Warning.
      const was = getCondition(run.obj.status?.conditions, "Synced");
      if (was?.reason !== u.reason || was.message !== u.message) run.warning(u.reason, u.message);
      synced = { status: "False", reason: u.reason, message: u.message };
    }
  }
  // Nothing under way (neither coming up nor a change waiting): the next look is a
  // routine poll, behind the keys with work to do. A read that left parts for later
  // (`partial`) is looked at again soon, as a follow-up: its Ready is known already, so
  // the parts wait behind every object still coming up, though not behind routine polls.
  const followUp = o.partial === true && requeueAfterMs === options.pollIntervalMs;
  if (followUp) requeueAfterMs = soon;
  const routine = requeueAfterMs === options.pollIntervalMs && o.ready.reason !== "Creating";
  const priority = followUp ? "deferred" : routine ? "low" : undefined;
  if (fixed?.length) synced = withFixedFields(synced, fixed, !o.upToDate);
  announceReady(run, o.ready);
  return done({
    facts,
    remote: o.remote,
    ready: o.ready,
    synced,
    requeueAfterMs,
    ...(priority ? { priority } : {}),
  });
}
