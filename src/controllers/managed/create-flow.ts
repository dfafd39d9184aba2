/**
 * The live (not deleting) half of the generic managed reconciler: adoption, the
 * crash-safe create protocol (create-protocol.ts) and observe → update. Each step
 * returns an {@link Outcome}; the reconciler turns it into conditions and status.
 */
import { reasonEntry } from "../../crds/reasons.js";
import { rfc3339 } from "../../runtime/clock.js";
import { bindingConflict, refused } from "./binding.js";
import {
  ANNOTATIONS,
  type CreatePending,
  createMayHaveHappened,
  decideAfterLookup,
  formatPending,
  newClientToken,
  nextCreateStep,
  readCreateState,
} from "./create-protocol.js";
import {
  DEFAULT_LIST_VISIBILITY_WINDOW_MS,
  DEFAULT_SUBSCRIPTION_POLL_MS,
  subscriptionPollDelay,
} from "./decisions.js";
import type { ManagedKind, ManagedObject, ManagedOptions } from "./external-client.js";
import { observe } from "./observe.js";
import { type Outcome, SYNCED_OK } from "./outcome.js";
import { factsOf, type ManagedRun } from "./run.js";
import { ERR, step, wrapError } from "./step-errors.js";

/** Message of the CreateOutcomeUnknown condition and event: what the user can do. */
export const OUTCOME_UNKNOWN_HELP = `Check the service: if the resource exists, adopt it by setting the annotation ${ANNOTATIONS.externalId} to its id; if it does not, create it again by removing the annotation ${ANNOTATIONS.createPending}.`;

/** {@link OUTCOME_UNKNOWN_HELP} with the kubectl commands for `obj`. */
function outcomeUnknownHelp(kind: string, name: string): string {
  const ref = `${kind.toLowerCase()}/${name}`;
  return `${OUTCOME_UNKNOWN_HELP} (kubectl annotate ${ref} ${ANNOTATIONS.externalId}=<id>, or kubectl annotate ${ref} ${ANNOTATIONS.createPending}-)`;
}

/**
 * Tokens of creates whose pending marker write failed in this process, so the create
 * was never sent (the marker may still have landed). Tokens are random per create, so a
 * marker carrying one is safe to drop and create anew. Bounded: the oldest go first.
 */
const unsentTokens = new Set<string>();
const MAX_UNSENT_TOKENS = 10_000;

function rememberUnsent(token: string): void {
  unsentTokens.add(token);
  if (unsentTokens.size > MAX_UNSENT_TOKENS) {
    const oldest = unsentTokens.values().next().value;
    if (oldest !== undefined) unsentTokens.delete(oldest);
  }
}

function creating(message: string): Outcome<never>["ready"] {
  return { status: "False", reason: "Creating", message };
}

/**
 * True when the next step of a live object is a fresh create (no adoption, no create
 * in flight, no remote id): its first write is `create-pending`, which then also adds
 * the finalizer.
 */
export function startsWithCreate<T extends ManagedObject, R>(
  kind: ManagedKind<T, R>,
  obj: T,
): boolean {
  if (kind.client.adoptId?.(obj)) return false;
  const state = readCreateState(obj.metadata?.annotations);
  return nextCreateStep(state, obj.metadata?.generation ?? 0).step === "Create";
}

/** Drives a live object one step: adopt, create, poll, look up, or observe and update. */
export async function createOrObserve<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  options: ManagedOptions,
): Promise<Outcome<R>> {
  const state = readCreateState(run.obj.metadata?.annotations);
  const adoptId = run.kind.client.adoptId?.(run.obj);
  // One binder per remote resource: an id another object holds is refused before any call.
  for (const id of new Set([state.externalId, adoptId])) {
    const conflict = id ? bindingConflict(run, id) : undefined;
    if (conflict) return refused(run, conflict, options);
  }
  if (adoptId && !state.externalId) {
    await run.annotate({
      [ANNOTATIONS.externalId]: adoptId,
      [ANNOTATIONS.createPending]: null,
      [ANNOTATIONS.subscriptionKey]: null,
      [ANNOTATIONS.createFailedGeneration]: null,
    });
    run.normal("Adopted", `bound to the existing remote resource ${adoptId}`);
    return observe(run, adoptId, options);
  }
  const next = nextCreateStep(state, run.generation);
  switch (next.step) {
    case "Observe":
      // An id set by hand (to resolve CreateOutcomeUnknown) settles the pending create.
      if (state.pending) await run.annotate({ [ANNOTATIONS.createPending]: null });
      return observe(run, next.externalId, options);
    case "PollSubscription":
      return poll(run, next.key, state.pending, options);
    case "LookupByToken":
      return lookup(run, next.pending, options);
    case "WaitForSpecChange": {
      const prev = run.obj.status?.conditions?.find((c) => c.type === "Ready");
      return {
        facts: factsOf(run),
        ready: {
          status: "False",
          reason: "CreateFailed",
          message: prev?.reason === "CreateFailed" ? prev.message : "the create failed",
        },
        synced: SYNCED_OK,
        keepStatus: true,
      };
    }
    case "Create":
      return create(run, options);
  }
}

async function create<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  options: ManagedOptions,
  token = newClientToken(),
): Promise<Outcome<R>> {
  const { client } = run.kind;
  // An order that could never finish (its result or list operation is missing) is not
  // placed: a terminal hold the runtime retries slowly, since the path can come back.
  const requireOperations = client.requireOperations?.bind(client);
  if (requireOperations) await step(ERR.operations, () => requireOperations(run));
  const preflight = client.preflight?.bind(client);
  const refusal = preflight ? await step(ERR.preflight, () => preflight(run)) : undefined;
  if (refusal) {
    // Waiting for something on its way (a referenced object, capacity) is no warning.
    if (reasonEntry(refusal.reason)?.state === "UnderWay")
      run.normal(refusal.reason, refusal.message);
    else run.warning(refusal.reason, refusal.message);
    const cond = { status: "False" as const, reason: refusal.reason, message: refusal.message };
    return {
      facts: factsOf(run),
      ready: cond,
      synced: cond,
      ...(refusal.retry ? { requeueAfterMs: options.pollIntervalMs } : {}),
    };
  }
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
    result = await client.create(run, token);
  } catch (err) {
    // A create refused before it could take effect is forgotten, so the next attempt is
    // a plain create; one that may have happened stays pending and is looked up.
    if (!createMayHaveHappened(err)) await run.annotate({ [ANNOTATIONS.createPending]: null });
    throw wrapError(ERR.create, err);
  }
  const first = options.subscriptionPollMs ?? DEFAULT_SUBSCRIPTION_POLL_MS;
  const subscription = { outcome: "Pending" as const, submittedTime: at };
  if (result.externalId) {
    await run.annotate({
      [ANNOTATIONS.externalId]: result.externalId,
      [ANNOTATIONS.createPending]: null,
      ...(result.subscriptionKey ? { [ANNOTATIONS.subscriptionKey]: result.subscriptionKey } : {}),
    });
    run.normal("Created", `created the remote resource ${result.externalId}`);
    return observe(run, result.externalId, options, { ...subscription, outcome: "Succeeded" });
  }
  if (result.subscriptionKey) {
    run.normal("CreateRequested", `ordered; subscription key ${result.subscriptionKey}`);
    // The first poll follows at once, before the key is written: an order that resolves
    // quickly is bound in one write (the id and the key together), Ready in this
    // reconcile without a status write that says Creating. Until that write the pending
    // marker covers the order: after a crash its client token finds the resource.
    return poll(run, result.subscriptionKey, pending, options, { justOrdered: true });
  } else {
    run.normal("CreateRequested", "create sent; looking the new resource up");
  }
  return {
    facts: { ...factsOf(run), subscription },
    ready: creating("the create was sent; waiting for the service"),
    synced: SYNCED_OK,
    requeueAfterMs: first,
  };
}

async function poll<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  key: string,
  pending: CreatePending | undefined,
  options: ManagedOptions,
  { justOrdered = false } = {},
): Promise<Outcome<R>> {
  const { client } = run.kind;
  const pollSubscription = client.pollSubscription?.bind(client);
  if (!pollSubscription) throw new Error(`${ERR.poll}: the kind has no subscription poll`);
  const submittedTime = pending?.at || undefined;
  const base = submittedTime ? { submittedTime } : {};
  // Right after the order the key is not written yet: it goes with the id when the
  // first poll binds one, and on its own before any other way out of this reconcile.
  const unwrittenKey: Record<string, string> = justOrdered
    ? { [ANNOTATIONS.subscriptionKey]: key }
    : {};
  const writeKey = async () => {
    if (justOrdered) await run.annotate(unwrittenKey);
  };
  let res: Awaited<ReturnType<typeof pollSubscription>>;
  try {
    res = await pollSubscription(run, key);
  } catch (err) {
    // Right after the order, a failed poll is only an early look: the order stands and
    // the next poll follows as planned, without Synced=False.
    if (!justOrdered) throw wrapError(ERR.poll, err);
    res = { state: "Pending" };
  }
  if (res.state === "Pending") {
    await writeKey();
    const first = options.subscriptionPollMs ?? DEFAULT_SUBSCRIPTION_POLL_MS;
    return {
      facts: { ...factsOf(run), subscription: { outcome: "Pending", ...base } },
      ready: creating(`subscription ${key} is pending`),
      synced: SYNCED_OK,
      requeueAfterMs: subscriptionPollDelay(
        pending ? run.ageOf(pending.at) : Number.NaN,
        first,
        options.pollIntervalMs,
      ),
    };
  }
  if (res.state === "Failed") {
    await run.annotate({
      [ANNOTATIONS.subscriptionKey]: null,
      [ANNOTATIONS.createPending]: null,
      [ANNOTATIONS.createFailedGeneration]: String(pending?.generation || run.generation),
    });
    const message = `subscription ${key} failed: ${res.message}`;
    run.warning("CreateFailed", message);
    return {
      facts: {
        ...factsOf(run),
        subscriptionKey: key,
        subscription: { outcome: "Failed", message: res.message, ...base },
      },
      ready: { status: "False", reason: "CreateFailed", message },
      synced: SYNCED_OK,
    };
  }
  let id = res.externalId;
  if (!id) {
    let found: string[] | undefined;
    try {
      found = pending?.token
        ? await step(ERR.lookup, () => client.lookupByToken(run, pending.token))
        : undefined;
    } catch (err) {
      await writeKey();
      throw err;
    }
    if (found?.length !== 1) {
      await writeKey();
      return unknownOutcome(
        run,
        `subscription ${key} succeeded without naming the resource, and ${found === undefined ? "no lookup by client token is possible" : `${found.length} resources carry the client token`}`,
      );
    }
    id = found[0] as string;
  }
  await run.annotate({
    [ANNOTATIONS.externalId]: id,
    [ANNOTATIONS.createPending]: null,
    ...unwrittenKey,
  });
  run.normal("Created", `subscription ${key} succeeded: remote resource ${id}`);
  return observe(run, id, options, { outcome: "Succeeded", ...base });
}

async function lookup<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  pending: CreatePending,
  options: ManagedOptions,
): Promise<Outcome<R>> {
  if (unsentTokens.delete(pending.token)) {
    // A marker whose create this process never sent: nothing to find, create anew.
    await run.annotate({ [ANNOTATIONS.createPending]: null });
    return create(run, options);
  }
  const found = pending.token
    ? await step(ERR.lookup, () => run.kind.client.lookupByToken(run, pending.token))
    : undefined;
  const decision = decideAfterLookup({
    token: pending.token,
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
        `found the remote resource ${decision.externalId} of an unfinished create by its client token`,
      );
      return observe(run, decision.externalId, options, {
        outcome: "Succeeded",
        submittedTime: pending.at,
      });
    case "Wait":
      return {
        facts: factsOf(run),
        ready: creating("an earlier create's outcome is not visible yet; looking again"),
        synced: SYNCED_OK,
        requeueAfterMs: decision.requeueAfterMs,
      };
    case "Unknown":
      return unknownOutcome(run, decision.message);
  }
}

function unknownOutcome<T extends ManagedObject, R>(
  run: ManagedRun<T, R>,
  why: string,
): Outcome<R> {
  const message = `${why}. ${outcomeUnknownHelp(run.kind.resource.kind, run.obj.metadata?.name ?? "")}`;
  run.warning("CreateOutcomeUnknown", message);
  const cond = { status: "False" as const, reason: "CreateOutcomeUnknown" as const, message };
  return { facts: factsOf(run), ready: cond, synced: cond };
}
