/**
 * The Poll step: the poll of a create's subscription (create-protocol.ts): pending,
 * failed, or succeeded — then the resource is bound by the id the subscription names
 * or, when it names none, by the create's client token (Observe; Unknown when neither
 * finds it).
 */

import { capFreeText } from "../../runtime/conditions.js";
import type { ManagedObject } from "./call.js";
import { ANNOTATIONS, type CreatePending, lookupKeyOf } from "./create-protocol.js";
import { firstSubscriptionPollMs, subscriptionPollDelay } from "./decisions.js";
import type { ManagedOptions } from "./external-client.js";
import { creatingReady, done, ERR, type Next, SYNCED_OK, step, wrapError } from "./outcome.js";
import type { ManagedRun } from "./run.js";

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
  } catch (err) {
    // Right after the order, a failed poll is only an early look: the order stands and
    // the next poll follows as planned, without Synced=False.
    if (!justOrdered) throw wrapError(ERR.poll, err);
    res = { state: "Pending" };
  }
  if (res.state === "Pending") {
    await writeKey();
    const first = firstSubscriptionPollMs(options);
    return done({
      facts: { ...run.facts(), subscription: { outcome: "Pending", ...base } },
      ready: creatingReady(`subscription ${key} is pending`),
      synced: SYNCED_OK,
      requeueAfterMs: subscriptionPollDelay(
        pending ? run.ageOf(pending.at) : Number.NaN,
        first,
        options.pollIntervalMs,
      ),
    });
  }
  if (res.state === "Failed") {
    ordered();
    await run.annotate({
      [ANNOTATIONS.subscriptionKey]: null,
      [ANNOTATIONS.createPending]: null,
      [ANNOTATIONS.createFailedGeneration]: String(pending?.generation || run.generation),
    });
    const message = `subscription ${key} failed: ${res.message}`;
    run.warning("CreateFailed", message);
    return done({
      facts: {
        ...run.facts(),
        subscriptionKey: key,
        subscription: { outcome: "Failed", message: capFreeText(res.message), ...base },
      },
      ready: { status: "False", reason: "CreateFailed", message },
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
      [ANNOTATIONS.createPending]: null,
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
