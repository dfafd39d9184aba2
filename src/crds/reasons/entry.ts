/**
 * The shape of a row of the shared reason table (reasons.ts) and the kind groups its
 * rows apply to, shared by the per-area parts of the table in this folder, and how the
 * parts are joined into one table.
 */

/**
 * The kinds that write a shared reason: every kind, every kind whose objects call the
 * service (`remote` "managed" or "observed" in its CrdDefinition), the kinds whose remote
 * resource the generic managed loop drives (`remote: "managed"`), or the kinds that join
 * the row (the `sharedReasons` of their CrdDefinition). A shared row never names a kind:
 * the groups are resolved against the registered kinds (reason-table.ts), so a new kind
 * gets or joins the shared reasons without an edit here.
 */
export type KindSet = "every kind" | "service kinds" | "managed kinds" | "joining kinds";

/** Every kind. */
export const EVERY = "every kind";
/** The kinds the generic managed loop drives. */
export const MANAGED = "managed kinds";
/** Every kind whose objects call the service (every kind but ServiceConnection). */
export const ALL = "service kinds";
/** The kinds that join the row (`sharedReasons` of their CrdDefinition). */
export const JOINED = "joining kinds";

/**
 * What a reason says about the object:
 * - `Ok`: as asked (Ready or Synced True, nothing to do).
 * - `UnderWay`: the operator is working, or waiting for something that is on its way
 *   (a subscription, a referenced object, capacity); `Reconciling=True`.
 * - `Terminal`: will not get better without a person (a change of the spec, of the
 *   API-key Secret, of the operator's configuration, or a decision); on Ready or
 *   Synced it makes `Stalled=True` and Argo CD's Degraded.
 * - `Resting`: not ready, but nothing is wrong and nothing is under way (a task or an
 *   instance stopped in the service).
 */
export type ReasonState = "Ok" | "UnderWay" | "Terminal" | "Resting";

/** One row of the shared reason table. */
export interface ReasonEntry {
  state: ReasonState;
  /** The condition types that carry the reason. */
  conditions: readonly string[];
  /** The kinds that write it. */
  kinds: KindSet;
  /** What it means. */
  meaning: string;
  /**
   * What the user does about it: required of a Terminal or Resting reason (the test
   * beside this file), where nothing will change without a person; the others say
   * "wait", which docs/troubleshooting.md writes for them.
   */
  action?: string;
  /**
   * What the operator does while the reason stands, where its state's usual answer
   * (docs/troubleshooting.md) is not what happens: a Terminal state read from the remote
   * resource on every poll ({@link READ_EVERY_POLL}) rather than a hold, a pause.
   */
  operator?: string;
}

/**
 * What the operator does for a Terminal reason it reads from the remote resource (a
 * failed task, a resource gone, drift): it keeps polling, it does not hold the object.
 */
export const READ_EVERY_POLL =
  "Reads the remote resource again on every poll (Stalled=True meanwhile) and sends nothing the message refuses; the condition goes as soon as the remote resource or the spec no longer gives it.";

/** What the user does while a referenced object is not ready: its message says whether it stalled. */
export const REFERENCE_NOT_READY_ACTION =
  "Nothing while it comes up. If the message says it is stalled, fix that object (its own reason here says how): this one goes on once it is ready.";

/** Row `e` of a Terminal reason read from the remote resource ({@link READ_EVERY_POLL}). */
export const readEveryPoll = <E extends object>(e: E): E & { operator: string } => ({
  ...e,
  operator: READ_EVERY_POLL,
});

/** A row of the shared table (see {@link ReasonEntry}). */
export const entry = (
  state: ReasonState,
  conditions: readonly string[],
  kinds: KindSet,
  meaning: string,
  action?: string,
): ReasonEntry => ({ state, conditions, kinds, meaning, ...(action ? { action } : {}) });

/** The conditions a refusal is written on. */
export const REFUSAL = ["Ready", "Synced"] as const;

/** The conditions a reason about a referenced object is written on. */
export const REFERENCE = [...REFUSAL, "ReferencesResolved"] as const;

/** The intersection of the members of union `U`. */
type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (
  i: infer I,
) => void
  ? I
  : never;

/**
 * One table of the reasons of every part, typed as all of them; throws when a reason is
 * in two parts (an object literal would refuse the duplicate key, a spread hides it).
 */
export function joinReasonParts<P extends readonly Record<string, ReasonEntry>[]>(
  ...parts: P
): UnionToIntersection<P[number]> {
  const table: Record<string, ReasonEntry> = {};
  for (const part of parts) {
    for (const [reason, entry] of Object.entries(part)) {
      if (Object.hasOwn(table, reason)) {
        throw new Error(`reason ${reason} is in two parts of the reason table`);
      }
      table[reason] = entry;
    }
  }
  return table as UnionToIntersection<P[number]>;
}
