/**
 * Observe → update, the last step of a live managed object (see reconciler.ts).
 */
import { ANNOTATIONS } from "./create-protocol.js";
import { DEFAULT_SUBSCRIPTION_POLL_MS } from "./decisions.js";
import type { ManagedFacts, ManagedObject, ManagedOptions } from "./external-client.js";
import { ERR, factsOf, type ManagedRun, type Outcome, SYNCED_OK, step } from "./run.js";

/**
 * What to do about a bound remote resource that does not exist: an id from the spec
 * (adoption, e.g. NasVolume.spec.storageId) cannot be removed, so the object must be
 * deleted and created anew; an id the operator recorded is dropped by removing its
 * annotation, and the next reconcile creates a new resource.
 */
export function remoteNotFound<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  externalId: string,
): string {
  if (run.kind.client.adoptId?.(run.obj) === externalId) {
    return `the remote resource ${externalId} named in the spec does not exist; the spec cannot drop it (the field may only be set once), so delete this object and create a new one, with the id of an existing resource or without one to order a new resource`;
  }
  return `the remote resource ${externalId} does not exist (deleted outside the cluster?); remove the annotation ${ANNOTATIONS.externalId} to create a new one, or delete this object`;
}

/** Observes `externalId` and, when the spec asks for a change, updates it. */
export async function observe<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  externalId: string,
  options: ManagedOptions,
  subscription?: ManagedFacts["subscription"],
): Promise<Outcome<R>> {
  const { client } = run.kind;
  const facts = { ...factsOf(run), ...(subscription ? { subscription } : {}) };
  let o = await step(ERR.observe, () => client.observe(run, externalId));
  if (!o.exists) {
    return {
      facts,
      ready: {
        status: "False",
        reason: "RemoteNotFound",
        message: remoteNotFound(run, externalId),
      },
      synced: SYNCED_OK,
      requeueAfterMs: options.pollIntervalMs,
      routine: true,
    };
  }
  const first = options.subscriptionPollMs ?? DEFAULT_SUBSCRIPTION_POLL_MS;
  // Still coming up, or waiting to make a change: look again sooner than the poll interval.
  const soon = Math.min(options.pollIntervalMs, 5 * first);
  let synced = SYNCED_OK;
  let requeueAfterMs = o.ready.reason === "Creating" ? soon : options.pollIntervalMs;
  if (!o.upToDate) {
    const remote = o.remote;
    const u = await step(ERR.update, () => client.update(run, externalId, remote));
    if (u.outcome === "Applied") {
      run.normal("Updated", u.message);
      const again = await step(ERR.observe, () => client.observe(run, externalId));
      if (again.exists) o = again;
      requeueAfterMs = first;
    } else if (u.outcome === "Waiting") {
      synced = { status: "True", reason: "Updating", message: u.message };
      requeueAfterMs = soon;
    } else {
      run.warning(u.reason, u.message);
      synced = { status: "False", reason: u.reason, message: u.message };
    }
  }
  // Nothing under way (neither coming up nor a change waiting): the next look is a
  // routine poll, behind the keys with work to do.
  const routine = requeueAfterMs === options.pollIntervalMs && o.ready.reason !== "Creating";
  return { facts, remote: o.remote, ready: o.ready, synced, requeueAfterMs, routine };
}
