/**
 * The steps of an order (the create protocol of decisions.ts). Create: the kind's checks,
 * the pending marker with a fresh client token, the create, and what its answer binds (an
 * id: Observe; a subscription: Poll). Poll follows the subscription, at once and then at
 * growing intervals: pending; failed (what the service made anyway, found by the token, is
 * bound); succeeded, bound by the id it names, else by the token (Unknown when neither
 * finds it). An order resolved at its first poll is bound in one write and told by one
 * Event (Created); CreateRequested when it is not.
 */
import { REASONS } from "../../crds/index.js";
import { capFreeText } from "../../runtime/object-writes.js";
import { rfc3339 } from "../../runtime/resource.js";
import type { ManagedObject, PreflightRefusal } from "./call.js";
import {
  createMayHaveHappened,
  lookupKeyOf,
  rememberAnswered,
  rememberCreateEnded,
  rememberUnsent,
  resultLeftEmpty,
} from "./create-recovery.js";
import {
  ANNOTATIONS,
  type CreatePending,
  formatPending,
  markerInFlightMs,
  newClientToken,
  resultAnswered,
  resultForgotten,
} from "./decisions.js";
import type { ManagedOptions } from "./external-client.js";
import { visibilityWindowMs } from "./gone-evidence.js";
import {
  agingPollMs,
  creatingReady,
  done,
  ERR,
  firstSubscriptionPollMs,
  type ManagedRun,
  type Next,
  type Outcome,
  SYNCED_OK,
  step,
  wrapError,
} from "./run.js";

/** A create not placed (references, preflight): Ready and Synced False, and an Event. */
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
  const pending: CreatePending = {
    token,
    at,
    generation: run.generation,
    inFlightMs: markerInFlightMs(options),
  };
  try {
    await run.annotate({
      ...client.pendingAnnotations?.(run.call),
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
    // Nothing of it is sent later: a lookup's wait counts from here (create-recovery.ts).
    rememberCreateEnded(token, run.ctx.clock.now().getTime());
    // One that may have happened stays pending and is looked up.
    if (createMayHaveHappened(err)) throw wrapError(ERR.create, err);
    // A create refused before it could take effect is forgotten, so the next attempt is
    // a plain create; a refusal the kind's check now explains (what it checks changed
    // since, as a name taken meanwhile) is held as that check's refusal.
    await run.annotate({ [ANNOTATIONS.createPending]: null });
    const explained = preflight ? await preflight(run.call).catch(() => undefined) : undefined;
    if (explained) return done(refusedCreate(run, explained, options));
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
    // The first poll ({@link poll}) follows at once, before the key is written: an order
    // that resolves quickly is bound in one write, Ready in this reconcile without a
    // status write that says Creating, and told by one Event. Until that write the
    // pending marker covers the order: after a crash its client token finds the resource.
    return { step: "Poll", key: result.subscriptionKey, pending, justOrdered: true };
  }
  // The one resource its lookup finds is this create's (lookup.ts), even where the
  // record shows no owner mark.
  rememberAnswered(run.obj.metadata?.uid ?? "", token);
  run.normal("CreateRequested", "create sent; looking the new resource up");
  return done({
    facts: { ...run.facts(), subscription },
    ready: creatingReady("the create was sent; waiting for the service"),
    synced: SYNCED_OK,
    requeueAfterMs: first,
  });
}

/**
 * Polls subscription `key` of the create `pending` once and acts on its state.
 * `justOrdered`: the create was sent in this reconcile and the key is not written yet.
 */
export async function poll<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  key: string,
  pending: CreatePending | undefined,
  options: ManagedOptions,
  justOrdered = false,
): Promise<Next<R>> {
  const { client } = run;
  const pollSubscription = client.pollSubscription?.bind(client);
  if (!pollSubscription) throw new Error(`${ERR.poll}: the kind has no subscription poll`);
  const submittedTime = pending?.at || undefined;
  const base = submittedTime ? { submittedTime } : {};
  // Right after the order the key is not written yet: it goes with the id when the
  // first poll binds one, and on its own before any other way out of this reconcile.
  const unwrittenKey: Record<string, string> = justOrdered
    ? { [ANNOTATIONS.subscriptionKey]: key }
    : {};
  // The order is told once: Created when this reconcile binds it, else CreateRequested.
  const ordered = () => {
    if (justOrdered) run.normal("CreateRequested", `ordered; subscription key ${key}`);
  };
  const writeKey = async () => {
    ordered();
    if (justOrdered) await run.annotate(unwrittenKey);
  };
  let res: Awaited<ReturnType<typeof pollSubscription>>;
  try {
    res = await pollSubscription(run.call, key);
    resultAnswered(run.absenceKey, key);
  } catch (err) {
    // Right after the order, a failed poll is only an early look: the order stands and
    // the next poll follows as planned, without Synced=False.
    if (justOrdered) res = { state: "Pending" };
    else if (pending && resultForgotten(run.absenceKey, key, err)) {
      // A result the service no longer keeps: the create's client token finds its resource.
      await run.annotate({ [ANNOTATIONS.subscriptionKey]: null });
      return { step: "Lookup", pending };
    } else throw wrapError(ERR.poll, err);
  }
  // An empty answer past the window: a result the service no longer keeps, as a 404.
  if (
    res.state === "Pending" &&
    res.empty &&
    pending &&
    resultLeftEmpty(res, run.ageOf(pending.at), visibilityWindowMs(options))
  ) {
    await run.annotate({ [ANNOTATIONS.subscriptionKey]: null });
    return { step: "Lookup", pending };
  }
  if (res.state === "Pending") {
    await writeKey();
    return done({
      facts: { ...run.facts(), subscription: { outcome: "Pending", ...base } },
      ready: creatingReady(`subscription ${key} is pending`),
      synced: SYNCED_OK,
      requeueAfterMs: agingPollMs(pending ? run.ageOf(pending.at) : Number.NaN, options),
    });
  }
  if (res.state === "Failed") {
    const subscription = { outcome: "Failed" as const, message: capFreeText(res.message), ...base };
    let made: string[];
    try {
      // A service may leave what it made before the order failed: found by the token.
      made = pending?.token ? ((await client.lookupByToken?.(run.call, pending)) ?? []) : [];
    } catch (err) {
      await writeKey();
      throw wrapError(ERR.lookup, err);
    }
    ordered();
    const message = `subscription ${key} failed: ${res.message}`;
    const [remnant, ...more] = made;
    if (remnant && more.length === 0) {
      // Bound, so that it is shown, never ordered twice, and deleted or kept by the policy.
      await run.annotate({
        [ANNOTATIONS.externalId]: remnant,
        ...unwrittenKey,
      });
      run.warning(
        "CreateFailed",
        `${message}; the service shows the resource ${remnant} it made for the order anyway: bound to it (deletionPolicy decides what becomes of it; delete the object to order anew)`,
      );
      return { step: "Observe", externalId: remnant, subscription };
    }
    await run.annotate({
      [ANNOTATIONS.subscriptionKey]: null,
      [ANNOTATIONS.createPending]: null,
      [ANNOTATIONS.createFailedGeneration]: String(pending?.generation || run.generation),
    });
    const left = made.length ? `; the service shows ${made.join(", ")} carrying its token` : "";
    run.warning("CreateFailed", message + left);
    return done({
      facts: { ...run.facts(), subscriptionKey: key, subscription },
      ready: { status: "False", reason: "CreateFailed", message: message + left },
      synced: SYNCED_OK,
    });
  }
  let id = res.externalId;
  if (!id) {
    let found: string[] | undefined;
    try {
      found = pending?.token
        ? await step(ERR.lookup, async () => client.lookupByToken?.(run.call, pending))
        : undefined;
    } catch (err) {
      await writeKey();
      throw err;
    }
    if (found?.length !== 1) {
      await writeKey();
      const by = lookupKeyOf(client.lookupKey?.(run.obj), pending?.token ?? "");
      return {
        step: "Unknown",
        why: `subscription ${key} succeeded without naming the resource, and ${found === undefined ? `no lookup by its ${by.what} is possible` : `${found.length} resources carry its ${by.what} ${JSON.stringify(by.value)}`}`,
      };
    }
    id = found[0] as string;
  }
  const bound = id;
  // The resource is read while the id is written; nothing after the read waits less.
  const binding = run
    .annotate({
      [ANNOTATIONS.externalId]: bound,
      ...unwrittenKey,
    })
    .then(
      () => run.normal("Created", `subscription ${key} succeeded: remote resource ${bound}`),
      (err: unknown) => {
        ordered();
        throw err;
      },
    );
  return {
    step: "Observe",
    externalId: bound,
    subscription: { outcome: "Succeeded", ...base },
    binding,
  };
}
