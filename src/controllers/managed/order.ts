/**
 * The Create step: placing the order of a new remote resource (create-protocol.ts):
 * the kind's checks before ordering, the pending marker with a fresh client token, the
 * create call, and what its answer binds (an id at once: Observe; a subscription: Poll).
 */
import { REASONS } from "../../crds/index.js";
import { rfc3339 } from "../../runtime/resource.js";
import type { ManagedObject, PreflightRefusal } from "./call.js";
import {
  ANNOTATIONS,
  type CreatePending,
  createMayHaveHappened,
  formatPending,
  newClientToken,
} from "./create-protocol.js";
import { firstSubscriptionPollMs } from "./decisions.js";
import type { ManagedOptions } from "./external-client.js";
import {
  creatingReady,
  done,
  ERR,
  type Next,
  type Outcome,
  SYNCED_OK,
  step,
  wrapError,
} from "./outcome.js";
import type { ManagedRun } from "./run.js";
import { rememberUnsent } from "./unsent-tokens.js";

/**
 * A create that is not placed (unresolved references or a preflight refusal): Ready and
 * Synced False with the reason, and an event (Normal for a wait on something on its
 * way, Warning otherwise).
 */
function refusedCreate<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  refusal: PreflightRefusal,
  options: ManagedOptions,
): Outcome<R> {
  // Waiting for something on its way (a referenced object, capacity) is no warning.
  if (REASONS.stateOf(refusal.reason) === "UnderWay") run.normal(refusal.reason, refusal.message);
  else run.warning(refusal.reason, refusal.message);
  const cond = { status: "False" as const, reason: refusal.reason, message: refusal.message };
  return {
    facts: run.facts(),
    ready: cond,
    synced: cond,
    ...(refusal.retry ? { requeueAfterMs: options.pollIntervalMs } : {}),
  };
}

/** Orders the remote resource of `run` with client `token` (a new one by default). */
export async function create<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  options: ManagedOptions,
  token = newClientToken(),
): Promise<Next<R>> {
  // Nothing is ordered before the references resolve; a change of a referenced object
  // requeues the object (the controller's reference watches).
  const unresolved = run.unresolved;
  if (unresolved) return done(refusedCreate(run, unresolved, options));
  const { client } = run;
  // An order that could never finish (its result or list operation is missing) is not
  // placed: a terminal hold the runtime retries slowly, since the path can come back.
  const requireOperations = client.requireOperations?.bind(client);
  if (requireOperations) await step(ERR.operations, () => requireOperations(run.call));
  const preflight = client.preflight?.bind(client);
  const refusal = preflight ? await step(ERR.preflight, () => preflight(run.call)) : undefined;
  if (refusal) return done(refusedCreate(run, refusal, options));
  const at = rfc3339(run.ctx.clock.now());
  const pending: CreatePending = { token, at, generation: run.generation };
  try {
    await run.annotate({
      [ANNOTATIONS.createPending]: formatPending(pending),
      [ANNOTATIONS.createFailedGeneration]: null,
    });
  } catch (err) {
    // The marker may have been written although its answer was lost (an API server
    // going away); the create was not sent, which this process alone knows.
    rememberUnsent(token);
    throw err;
  }
  let result: Awaited<ReturnType<typeof client.create>>;
  try {
    result = await client.create(run.call, token);
  } catch (err) {
    // A create refused before it could take effect is forgotten, so the next attempt is
    // a plain create; one that may have happened stays pending and is looked up.
    if (!createMayHaveHappened(err)) await run.annotate({ [ANNOTATIONS.createPending]: null });
    throw wrapError(ERR.create, err);
  }
  const first = firstSubscriptionPollMs(options);
  const subscription = { outcome: "Pending" as const, submittedTime: at };
  const id = result.externalId;
  if (id) {
    // The resource is read while its id is written (observe.ts, readWhileBinding).
    const binding = run
      .annotate({
        [ANNOTATIONS.externalId]: id,
        [ANNOTATIONS.createPending]: null,
        ...(result.subscriptionKey
          ? { [ANNOTATIONS.subscriptionKey]: result.subscriptionKey }
          : {}),
      })
      .then(() => run.normal("Created", `created the remote resource ${id}`));
    return {
      step: "Observe",
      externalId: id,
      subscription: { ...subscription, outcome: "Succeeded" },
      binding,
    };
  }
  if (result.subscriptionKey) {
    // The first poll follows at once, before the key is written: an order that resolves
    // quickly is bound in one write (the id and the key together), Ready in this
    // reconcile without a status write that says Creating, and told by one Event
    // (Created; CreateRequested only when it is not bound at once, subscription.ts).
    // Until that write the pending marker covers the order: after a crash its client
    // token finds the resource.
    return { step: "Poll", key: result.subscriptionKey, pending, justOrdered: true };
  }
  run.normal("CreateRequested", "create sent; looking the new resource up");
  return done({
    facts: { ...run.facts(), subscription },
    ready: creatingReady("the create was sent; waiting for the service"),
    synced: SYNCED_OK,
    requeueAfterMs: first,
  });
}
