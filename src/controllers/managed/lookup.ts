/**
 * The LookupByToken step: recovery of an unfinished create (a pending marker without an
 * id, e.g. after a crash): the remote resource is looked up by the create's client
 * token and adopted (Observe), waited for, or reported Unknown (create-protocol.ts
 * decides which). A marker whose create this process never sent is dropped (Create).
 */

import { DEFAULT_LIST_VISIBILITY_WINDOW_MS } from "../../service/defaults.js";
import type { ManagedObject } from "./call.js";
import {
  ANNOTATIONS,
  type CreatePending,
  decideAfterLookup,
  lookupKeyOf,
} from "./create-protocol.js";
import type { ManagedOptions } from "./external-client.js";
import { creatingReady, done, type Next, SYNCED_OK } from "./outcome.js";
import type { ManagedRun } from "./run.js";
import { ERR, step } from "./step-errors.js";
import { takeUnsentToken } from "./unsent-tokens.js";

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
  const decision = decideAfterLookup({
    token: pending.token,
    key,
    found,
    pendingAgeMs: run.ageOf(pending.at),
    visibilityGraceMs: options.visibilityGraceMs ?? DEFAULT_LIST_VISIBILITY_WINDOW_MS,
  });
  switch (decision.decision) {
    case "Adopt":
      await run.annotate({
        [ANNOTATIONS.externalId]: decision.externalId,
        [ANNOTATIONS.createPending]: null,
      });
      run.normal(
        "Recovered",
        `found the remote resource ${decision.externalId} of an unfinished create by its ${key.what}`,
      );
      return {
        step: "Observe",
        externalId: decision.externalId,
        subscription: { outcome: "Succeeded", submittedTime: pending.at },
      };
    case "Wait":
      return done({
        facts: run.facts(),
        ready: creatingReady("an earlier create's outcome is not visible yet; looking again"),
        synced: SYNCED_OK,
        requeueAfterMs: decision.requeueAfterMs,
      });
    case "Unknown":
      return { step: "Unknown", why: decision.message };
  }
}
