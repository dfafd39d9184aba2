import { z } from "zod";
import { described } from "./definition.js";

/**
 * Condition types every kind reports (docs/conditions.md). `Ready` reflects the remote
 * resource (True when it is usable, or for a TrainingJob when its task finished
 * successfully); `Synced` reflects the last reconcile (False with the error text when
 * it failed); `Reconciling` and `Stalled` (kstatus, present only when True) say whether
 * work is under way or a person must act (derived by reason-table.ts).
 */
export const ConditionType = z.enum(["Ready", "Synced", "Reconciling", "Stalled"]);
/** A condition type every kind reports. */
export type ConditionType = z.infer<typeof ConditionType>;

/** `True`, `False` or `Unknown`, as in metav1.Condition. */
export const ConditionStatus = z.enum(["True", "False", "Unknown"]);
/** The status of a condition. */
export type ConditionStatus = z.infer<typeof ConditionStatus>;

/**
 * The condition reasons are each kind's own (the `reasons` of its CrdDefinition) and the
 * shared ones of reasons.ts (`ConditionReason` is their union), each with what it says
 * about health, gathered by reason-table.ts; the kstatus conditions `Reconciling` and
 * `Stalled` are derived from them (`kstatusCondition` of reason-table.ts).
 */

/** RFC 3339 timestamp as a string (`format: date-time` in the CRD). */
export function timestamp(description: string) {
  return z.string().meta({ description, format: "date-time" });
}

/**
 * One condition, in the shape and with the limits of metav1.Condition, so that
 * `kubectl wait --for=condition=Ready` and Argo CD understand it.
 */
export const conditionSchema = z
  .object({
    type: described(
      z
        .string()
        .max(316)
        .regex(
          /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/,
        ),
      "Type of the condition: Ready (the remote resource is usable) or Synced (the last reconcile succeeded).",
    ),
    status: described(ConditionStatus, "Status of the condition: True, False or Unknown."),
    observedGeneration: described(
      z.number().int().min(0),
      "metadata.generation of the object when the condition was set; a lower value than the current generation means the condition is stale.",
    ).optional(),
    lastTransitionTime: timestamp("When the condition last changed its status."),
    reason: described(
      z
        .string()
        .min(1)
        .max(1024)
        .regex(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/),
      "Machine-readable PascalCase reason of the last transition.",
    ),
    message: described(
      z.string().max(32768),
      "Human-readable detail of the last transition; empty when there is nothing to add.",
    ),
  })
  .meta({ description: "One condition of the object, in metav1.Condition shape." });
/** One condition (metav1.Condition). */
export type Condition = z.infer<typeof conditionSchema>;

/** The conditions list of a status: a list-map keyed by `type`. */
export const conditionsSchema = z.array(conditionSchema).meta({
  description:
    "Current state of the object as conditions: Ready reflects the remote resource, Synced the last reconcile.",
  "x-kubernetes-list-type": "map",
  "x-kubernetes-list-map-keys": ["type"],
});

/** Fields every status has: `observedGeneration` and `conditions`. */
export const statusBaseShape = {
  observedGeneration: described(
    z.number().int().min(0),
    "metadata.generation of the spec the controller last reconciled.",
  ).optional(),
  conditions: conditionsSchema.optional(),
};
