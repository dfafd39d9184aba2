/**
 * The LookupByToken step: recovery of an unfinished create (a pending marker without an
 * id, e.g. after a crash): the remote resource is looked up by the create's client
 * token and adopted (Observe), waited for, or reported Unknown (create-recovery.ts
 * decides which). A marker whose create this process never sent is dropped (Create).
 * Once the create can no longer take effect (`createInFlightMs`) and the visibility
 * window has passed after that, a create the kind's list proves absent (`tokenAbsence`)
 * in {@link ABSENT_LISTINGS_FOR_GONE} complete listings in a row was never made: the
 * marker is dropped and the create sent again, once per marker, with a new token (unless
 * `service.recreateLostCreates` is false). Also the Adopt step: the object is bound to
 * the remote resource its spec names ({@link adopt}).
 */

import { rfc3339 } from "../../runtime/resource.js";
import type { ManagedObject, ReadyState } from "./call.js";
import {
  createInFlightMs,
  decideAfterLookup,
  lookupKeyOf,
  takeAnswered,
  takeUnsentToken,
} from "./create-recovery.js";
import { ANNOTATIONS, type CreatePending } from "./decisions.js";
import type { ManagedOptions } from "./external-client.js";
import { absentListings, visibilityWindowMs } from "./gone-evidence.js";
import { creatingReady, done, ERR, type ManagedRun, type Next, step } from "./run.js";

/** Looks the resource of the create `pending` up by its client token and acts on it. */
export async function lookup<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  pending: CreatePending,
  options: ManagedOptions,
): Promise<Next<R>> {
  if (takeUnsentToken(pending.token)) {
    // A marker whose create this process never sent: nothing to find, create anew.
    await run.annotate({ [ANNOTATIONS.createPending]: null });
    return { step: "Create" };
  }
  const found = pending.token
    ? await step(ERR.lookup, async () => run.client.lookupByToken?.(run.call, pending))
    : undefined;
  const key = lookupKeyOf(run.client.lookupKey?.(run.obj), pending.token);
  const windowMs = visibilityWindowMs(options);
  const inFlightMs = createInFlightMs(pending, options);
  const decision = decideAfterLookup({
    token: pending.token,
    key,
    found,
    pendingAgeMs: run.ageOf(pending.at),
    inFlightMs,
    visibilityGraceMs: windowMs,
  });
  switch (decision.decision) {
    case "Adopt": {
      const binding = run
        .annotate({ [ANNOTATIONS.externalId]: decision.externalId })
        .then(() =>
          run.normal(
            "Recovered",
            `found the remote resource ${decision.externalId} of an unfinished create by its ${key.what}`,
          ),
        );
      const next: Next<R> = {
        step: "Observe",
        externalId: decision.externalId,
        subscription: { outcome: "Succeeded", submittedTime: pending.at },
      };
      // A create that answered in this process made the one found: bound as an id its
      // answer names is, read while written (observe.ts: its own create's); else bound
      // before the read.
      if (takeAnswered(run.obj.metadata?.uid ?? "", pending.token)) return { ...next, binding };
      await binding;
      return next;
    }
    case "Wait": {
      const at = Date.parse(pending.at);
      const lasts = Number.isFinite(inFlightMs) ? inFlightMs : 0;
      const ends = rfc3339(new Date(at + lasts + windowMs));
      return done({
        facts: run.facts(),
        ready: creatingReady("an earlier create's outcome is not visible yet; looking again"),
        synced: pendingSynced(
          `a create's answer was lost; looking its resource up by its ${key.what} until ${ends}: the create may take effect until ${takesEffectUntil(at, inFlightMs)}, and the service may take service.listVisibilityWindowMs more to list it`,
        ),
        requeueAfterMs: decision.requeueAfterMs,
      });
    }
    case "Unknown":
      // None found after the window (the only Unknown with an empty answer): the list
      // may prove the create was never made, if it can no longer take effect.
      if (found?.length === 0 && pending.token && Number.isFinite(inFlightMs)) {
        const again = await lostCreate(run, pending, key.what, inFlightMs, options);
        if (again) return again;
      }
      return { step: "Unknown", why: decision.message };
  }
}

/**
 * Until when the create of a marker written at `at` may take effect, and why: the service
 * is given the request timeout after the create call ended, or after the reconcile that
 * sent it (of a process that stopped) could last send it.
 */
function takesEffectUntil(at: number, inFlightMs: number): string {
  if (!Number.isFinite(inFlightMs)) {
    return "any time (with reconcileTimeoutMs 0, nothing bounds when a stopped process sent it)";
  }
  return `${rfc3339(new Date(at + inFlightMs))} (service.timeoutMs after its call ended; where the process that sent it stopped, reconcileTimeoutMs + service.timeoutMs after it was recorded)`;
}

/** Synced=False CreateOutcomePending with `message`. */
function pendingSynced(message: string): ReadyState {
  return { status: "False", reason: "CreateOutcomePending", message };
}

/**
 * A create the lookup never found, past the window: absent from enough complete
 * listings in a row (gone-evidence.ts), the marker is dropped and the create
 * repeats at once (a Warning event and the conditions say why); undefined when the
 * evidence cannot decide (CreateOutcomeUnknown).
 */
async function lostCreate<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  pending: CreatePending,
  what: string,
  inFlightMs: number,
  options: ManagedOptions,
): Promise<Next<R> | undefined> {
  if (options.recreateLostCreates === false) return undefined;
  const { listings, proven } = await step(ERR.lookup, () => absentListings(run, pending));
  if (listings === 0) return undefined;
  if (!proven) {
    const message = `a create's answer was lost and its resource is absent from ${listings} complete listing(s) after it could last take effect and the visibility window; listing once more before creating again`;
    return done({
      facts: run.facts(),
      ready: creatingReady(message),
      synced: pendingSynced(message),
      requeueAfterMs: 1000,
    });
  }
  // The proof rests on the window: a create the service makes later than it would be a
  // second resource, so the Event names the window and when it began.
  const window = `${visibilityWindowMs(options) / 1000} s, service.listVisibilityWindowMs`;
  const until = takesEffectUntil(Date.parse(pending.at), inFlightMs);
  const why = `the create sent at ${pending.at} was not answered, and no resource with its ${what} is in ${listings} complete listings in a row after the visibility window (${window}) that followed the last moment it could take effect, ${until}: the service did not make it, so it is created again with a new client token (were a create to take effect later than the window, this would make a second resource)`;
  run.warning("CreateRepeated", why);
  await run.annotate({ [ANNOTATIONS.createPending]: null });
  return done({
    facts: run.facts(),
    ready: creatingReady(why),
    synced: pendingSynced(why),
    // Soon, not in this reconcile: the conditions say why before the new create.
    requeueAfterMs: 10,
  });
}

/** Binds the object to the remote resource its spec names (adoption); it is observed next. */
export async function adopt<T extends ManagedObject, R>(run: ManagedRun<T, R>): Promise<Next<R>> {
  const id = run.adoptId as string;
  await run.annotate({
    [ANNOTATIONS.externalId]: id,
    [ANNOTATIONS.createPending]: null,
    [ANNOTATIONS.subscriptionKey]: null,
    [ANNOTATIONS.createFailedGeneration]: null,
  });
  run.normal("Adopted", `bound to the existing remote resource ${id}`);
  return { step: "Observe", externalId: id };
}
