/**
 * What may change in each kind's spec after creation, and whose rule it is: the one
 * source of the transition rules of the CRDs (the `oldSelf` CEL rules, see
 * {@link mutabilityRules}) and of the mutability tables of docs/crds.md. A field not
 * listed for its kind may change at any time.
 *
 * - `service`: the service cannot change it (a submitted task, a subscribed storage);
 *   the message says so and what to do instead.
 * - `operator`: the operator's own rule (what an object observes or is bound to).
 */
import { type CelRule, immutableField } from "./definition.js";
import type { KindName } from "./reasons.js";
import { trainingConfigShape } from "./training.js";

/** How a field may change after creation. */
export type Mutability =
  /** Cannot be added, removed or changed. */
  | "immutable"
  /** May go from unset to set once, never change or be removed. */
  | "setOnce";

/** One field that may not change freely. */
export interface FieldRule {
  field: string;
  mutability: Mutability;
  /** Whose rule it is. */
  owner: "service" | "operator";
  /** Why, and what to do instead (completes the refusal message). */
  why: string;
}

const SUBMITTED_TASK =
  "the service cannot change a submitted training task (only its description and ports); create a new TrainingJob instead";

/** The TrainingJob fields fixed at submission (the service's rule). */
const TRAINING_JOB_FIXED = [
  "taskName",
  "createType",
  "templateRef",
  "copyFrom",
  "priority",
  ...Object.keys(trainingConfigShape),
];

const BINDING_WHY =
  "it selects the observed instance; create another CciInstance to observe a different one";

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

/** The fields of each kind that may not change freely; every other field may. */
export const MUTABILITY: Record<KindName, readonly FieldRule[]> = {
  TrainingJob: [
    ...TRAINING_JOB_FIXED.map(
      (field): FieldRule => ({
        field,
        mutability: "immutable",
        owner: "service",
        why: SUBMITTED_TASK,
      }),
    ),
    CONNECTION_REF_RULE,
  ],
  NasVolume: [
    {
      field: "productCode",
      mutability: "immutable",
      owner: "service",
      why: "the product of a storage is fixed when it is subscribed; create a new NasVolume for another product",
    },
    {
      field: "name",
      mutability: "immutable",
      owner: "service",
      why: "it is the storage's directory name, fixed when the storage is subscribed",
    },
    {
      field: "description",
      mutability: "immutable",
      owner: "service",
      why: "the service offers no update of a storage's description",
    },
    {
      field: "aidcId",
      mutability: "immutable",
      owner: "service",
      why: "a storage cannot move to another compute center",
    },
    {
      field: "storageId",
      mutability: "setOnce",
      owner: "operator",
      why: "it binds the object to its storage instance (it may be set once, e.g. to resolve CreateOutcomeUnknown); to use another storage, or when the storage no longer exists, delete this NasVolume and create a new one",
    },
    CONNECTION_REF_RULE,
  ],
  CciInstance: [
    ...(["instanceId", "name", "aidcId"] as const).map(
      (field): FieldRule => ({
        field,
        mutability: "immutable",
        owner: "operator",
        why: BINDING_WHY,
      }),
    ),
    CONNECTION_REF_RULE,
  ],
  TrainingTemplate: [
    {
      field: "fromTrainingJobRef",
      mutability: "immutable",
      owner: "operator",
      why: "a template is saved from its TrainingJob once; create another TrainingTemplate to save another job",
    },
    CONNECTION_REF_RULE,
  ],
  ServiceConnection: [],
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

/** The transition rules (on the spec object) that enforce {@link MUTABILITY} for `kind`. */
export function mutabilityRules(kind: KindName): CelRule[] {
  return MUTABILITY[kind].map((r) => {
    if (r.mutability === "immutable") return immutableField(r.field, mutabilityMessage(r));
    return {
      rule: `!has(oldSelf.${r.field}) || (has(self.${r.field}) && self.${r.field} == oldSelf.${r.field})`,
      message: mutabilityMessage(r),
      fieldPath: `.${r.field}`,
    };
  });
}

/** The spec fields of `kind` that may change at any time, given all its spec fields. */
export function mutableFields(kind: KindName, fields: readonly string[]): string[] {
  const fixed = new Set(MUTABILITY[kind].map((r) => r.field));
  return fields.filter((f) => !fixed.has(f));
}
