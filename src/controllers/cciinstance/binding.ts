/**
 * Which CCI instance a CciInstance observes: a pure decision over the spec, the id
 * already recorded, and the instances the service lists.
 *
 * - A recorded id (annotation `aidc.io/external-id`, else `status.instanceId`) wins:
 *   once bound, an object stays bound to that instance even if it is renamed or a
 *   second instance of the same name appears, and a restored object (annotations
 *   kept, status lost) binds to the same instance again.
 * - `spec.instanceId` binds directly.
 * - `spec.name` (+ `spec.aidcId`) binds only when exactly one listed instance has
 *   exactly that name (the service's `name` filter is fuzzy, so matching is done
 *   here); none or several leaves the object unbound, with a message naming what
 *   was found.
 */
import { CCI_INSTANCE_REASONS, type CciInstanceSpec } from "../../crds/cciinstance.js";
import type { OwnReason } from "../../crds/reasons.js";
import type { ConditionInput } from "../../runtime/index.js";
import type { CciInstance } from "../../service/schemas/cci.js";
import { type BindingRefusal, isBindingRefusal } from "../managed/tenancy.js";

const R = CCI_INSTANCE_REASONS.names;

/** How many candidates a message names before it says "and N more". */
const NAMED_CANDIDATES = 10;

/** The binding decision. */
export type Binding =
  | { bound: true; instanceId: string; via: "recorded" | "instanceId" | "name" }
  | { bound: false; reason: OwnReason; message: string };

/** Inputs of {@link decideBinding}. */
export interface BindingInput {
  spec: Pick<CciInstanceSpec, "instanceId" | "name" | "aidcId">;
  /** The id recorded in the annotation or the status, if any. */
  recordedId: string | undefined;
  /** Every listed instance (the shared snapshot). */
  instances: Iterable<CciInstance>;
}

/** Decides the instance to observe; see the module comment for the order. */
export function decideBinding(input: BindingInput): Binding {
  const { spec, recordedId } = input;
  if (spec.instanceId) {
    // A recorded id that disagrees with spec.instanceId can only come from an edited
    // annotation; the spec (immutable) is the user's intent.
    return { bound: true, instanceId: spec.instanceId, via: "instanceId" };
  }
  if (recordedId) return { bound: true, instanceId: recordedId, via: "recorded" };
  const name = spec.name ?? "";
  const where = spec.aidcId === undefined ? "" : ` in compute center ${spec.aidcId}`;
  const matches = [...input.instances].filter(
    (i) => i.name === name && (spec.aidcId === undefined || i.aidcId === spec.aidcId),
  );
  const [only, ...others] = matches;
  if (only && others.length === 0) {
    return { bound: true, instanceId: only.id, via: "name" };
  }
  if (!only) {
    return {
      bound: false,
      reason: R.NoMatchingInstance,
      message: `no CCI instance is named "${name}"${where}; nothing is bound (checked again every poll)`,
    };
  }
  return {
    bound: false,
    reason: R.AmbiguousName,
    message: `${matches.length} CCI instances are named "${name}"${where}: ${describeCandidates(matches)}; nothing is bound (checked again every poll): create a CciInstance with spec.instanceId, or with aidcId, to choose one (the fields that select the instance cannot change)`,
  };
}

/** What bound the object, for its Bound condition and Event: the field or the record. */
export function bindingSource(via: Extract<Binding, { bound: true }>["via"]): string {
  switch (via) {
    case "recorded":
      return "the id it recorded (annotation aidc.io/external-id)";
    case "instanceId":
      return "spec.instanceId";
    case "name":
      return "its name (spec.name)";
  }
}

function describeCandidates(matches: CciInstance[]): string {
  const named = matches
    .slice(0, NAMED_CANDIDATES)
    .map(
      (i) =>
        `${i.id} (${[i.status, i.aidcId === undefined ? "" : `aidcId ${i.aidcId}`].filter(Boolean).join(", ")})`,
    );
  const more = matches.length - named.length;
  return more > 0 ? `${named.join(", ")} and ${more} more` : named.join(", ");
}

/** The recorded id: the annotation first (it survives a restore), then the status. */
export function recordedInstanceId(
  annotationId: string | undefined,
  statusId: string | undefined,
): string | undefined {
  return annotationId?.trim() || statusId?.trim() || undefined;
}

/** Synced=True: the reconcile did what it could (bound or not). */
export const SYNCED: ConditionInput = {
  type: "Synced",
  status: "True",
  reason: "ReconcileSuccess",
  message: "",
};

/**
 * The conditions of an object bound to no instance: Bound and Ready False and Synced
 * True. A refused binding is terminal, and its reason on Ready marks the object as
 * holding nothing; otherwise Ready says NotBound.
 */
export function unboundConditions(
  binding: Extract<Binding, { bound: false }> | BindingRefusal,
): ConditionInput[] {
  const readyReason = isBindingRefusal(binding.reason) ? binding.reason : R.NotBound;
  return [
    { type: "Bound", status: "False", reason: binding.reason, message: binding.message },
    { type: "Ready", status: "False", reason: readyReason, message: binding.message },
    SYNCED,
  ];
}

/** The conditions of an object whose bound instance does not exist (any more). */
export function goneConditions(message: string): ConditionInput[] {
  return [
    { type: "Bound", status: "False", reason: R.InstanceNotFound, message },
    { type: "Ready", status: "False", reason: R.InstanceNotFound, message },
    SYNCED,
  ];
}
