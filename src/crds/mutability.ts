/**
 * What may change in a kind's spec after creation, and whose rule it is: each kind's
 * module declares its `FieldRule`s (the `mutability` of its CrdDefinition), the one
 * source of the transition rules of the CRD (the `oldSelf` CEL rules, see
 * {@link mutabilityRules}) and of the mutability tables of docs/crds.md. A field not
 * listed for its kind may change at any time.
 *
 * - `service`: the service cannot change it (a submitted task, a subscribed storage);
 *   the message says so and what to do instead.
 * - `operator`: the operator's own rule (what an object observes or is bound to).
 */
import { type CelRule, type FieldRule, immutableField } from "./definition.js";

export type { FieldRule, Mutability } from "./definition.js";

/**
 * `spec.connectionRef` of every kind that calls the service: fixed at creation, since
 * the remote resource lives in the connection's account.
 */
export const CONNECTION_REF_RULE: FieldRule = {
  field: "connectionRef",
  mutability: "immutable",
  owner: "operator",
  why: "the remote resource lives in the account of the connection it was made with; create a new object to use another connection",
};

const WHOSE: Record<FieldRule["owner"], string> = {
  service: "a limit of the service",
  operator: "a rule of the operator",
};

/** The refusal message of a change of `r.field`: what, whose rule, why. */
export function mutabilityMessage(r: FieldRule): string {
  const what = r.mutability === "setOnce" ? "is immutable once set" : "is immutable";
  return `${r.field} ${what} (${WHOSE[r.owner]}): ${r.why}`;
}

/** The transition rules (on the spec object) that enforce a kind's `rules`. */
export function mutabilityRules(rules: readonly FieldRule[]): CelRule[] {
  return rules.map((r) => {
    if (r.mutability === "immutable") return immutableField(r.field, mutabilityMessage(r));
    return {
      rule: `!has(oldSelf.${r.field}) || (has(self.${r.field}) && self.${r.field} == oldSelf.${r.field})`,
      message: mutabilityMessage(r),
      fieldPath: `.${r.field}`,
    };
  });
}

/** The spec fields that may change at any time under `rules`, given all the spec fields. */
export function mutableFields(rules: readonly FieldRule[], fields: readonly string[]): string[] {
  const fixed = new Set(rules.map((r) => r.field));
  return fields.filter((f) => !fixed.has(f));
}

/** The same rule for each of `fields` (e.g. the fields the service cannot change). */
export function sameRuleFor(
  fields: readonly string[],
  rule: Omit<FieldRule, "field">,
): FieldRule[] {
  return fields.map((field) => ({ field, ...rule }));
}

/**
 * The rule of the field that binds an object to an existing remote resource (its
 * `adoptedId` of fields.ts): set once, by the operator's rule; `why` says how to use
 * another one.
 */
export function adoptedIdRule(field: string, why: string): FieldRule {
  return { field, mutability: "setOnce", owner: "operator", why };
}
