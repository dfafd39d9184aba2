/**
 * The reasons only one kind writes, declared in the kind's own module of src/crds (the
 * `reasons` of its CrdDefinition) rather than in the shared table, so that adding a
 * kind edits no file of the table. reason-table.ts gathers them with the shared ones.
 */
import { REFERENCE, type ReasonEntry, type ReasonState } from "./entry.js";

export { REFERENCE, REFERENCE_NOT_READY_ACTION, readEveryPoll } from "./entry.js";

declare const ownReasonBrand: unique symbol;

/** A reason a kind declares in its own module, named through {@link ownReasons}. */
export type OwnReason = string & { readonly [ownReasonBrand]: true };

/** A row of a kind's own reasons: the kind is the one that declares it. */
export type OwnReasonEntry = Omit<ReasonEntry, "kinds">;

/** A row of a kind's own reasons (see {@link ownReasons}). */
export const ownReason = (
  state: ReasonState,
  conditions: readonly string[],
  meaning: string,
  action?: string,
): OwnReasonEntry => ({ state, conditions, meaning, ...(action ? { action } : {}) });

/**
 * A row of a kind's own reasons for a referenced object that does not exist or is not
 * ready yet, which the object waits for: under way, on {@link REFERENCE}'s conditions.
 */
export const referenceWait = (meaning: string, action?: string): OwnReasonEntry =>
  ownReason("UnderWay", REFERENCE, meaning, action);

/** The reasons only one kind writes: their rows, and their names to write in conditions. */
export interface OwnReasons<Name extends string = string> {
  readonly entries: Readonly<Record<Name, OwnReasonEntry>>;
  readonly names: Readonly<Record<Name, OwnReason>>;
}

/**
 * Declares the reasons only one kind writes: put the result in the `reasons` of its
 * CrdDefinition (so that kstatus, the Argo CD scripts and docs/conditions.md know them)
 * and write `names.X` in its conditions and refusals. Throws for a name that is not
 * PascalCase; a name the shared table or another kind has is refused where the table is
 * gathered (reason-table.ts).
 */
export function ownReasons<Name extends string>(
  entries: Record<Name, OwnReasonEntry>,
): OwnReasons<Name> {
  const names: Record<string, OwnReason> = {};
  for (const name of Object.keys(entries)) {
    if (!/^[A-Z][A-Za-z0-9]*$/.test(name)) throw new Error(`reason ${name}: not PascalCase`);
    names[name] = name as OwnReason;
  }
  return { entries, names: names as Record<Name, OwnReason> };
}
