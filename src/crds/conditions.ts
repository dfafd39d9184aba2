import { z } from "zod";
import { described } from "./definition.js";

/**
 * Condition types every kind reports (DESIGN §5). `Ready` reflects the remote resource
 * (True when it is usable); `Synced` reflects the last reconcile (False with the error
 * text when it failed).
 */
export const ConditionType = z.enum(["Ready", "Synced"]);
/** A condition type every kind reports. */
export type ConditionType = z.infer<typeof ConditionType>;

/** `True`, `False` or `Unknown`, as in metav1.Condition. */
export const ConditionStatus = z.enum(["True", "False", "Unknown"]);
/** The status of a condition. */
export type ConditionStatus = z.infer<typeof ConditionStatus>;

/**
 * Reasons shared by the controllers (PascalCase, as metav1.Condition requires). A
 * controller may use other PascalCase reasons of its own; these are the common ones.
 * A reason ending in `Failed`, `Refused`, `Forbidden`, `Terminal`, `InvalidSpec` or
 * `OutcomeUnknown` means "will not succeed without a change of the spec or of the API
 * key Secret": the Argo CD health checks (deploy/argocd/health) report it as Degraded.
 */
export const ConditionReason = {
  /** Ready=True: the remote resource exists and is usable. */
  Available: "Available",
  /** Ready=False: the remote resource is being created (subscription pending). */
  Creating: "Creating",
  /** Ready=False: the remote resource exists but is not usable (stopped, failed...). */
  Unavailable: "Unavailable",
  /** Ready=False: the object is being deleted. */
  Deleting: "Deleting",
  /** Synced=True: the last reconcile succeeded. */
  ReconcileSuccess: "ReconcileSuccess",
  /** Synced=False: the last reconcile failed with a retryable error (backing off). */
  ReconcileError: "ReconcileError",
  /** Synced=False: the service refused the request; waits for a spec or Secret change. */
  ReconcileTerminal: "ReconcileTerminal",
  /** Synced=False: a create may or may not have happened; the user must decide. */
  CreateOutcomeUnknown: "CreateOutcomeUnknown",
  /**
   * Ready (Unknown or False) and Synced=False: the service refused the API key (403,
   * 401) or the key cannot be read. Retried on the hold backoff and when the key changes.
   */
  ApiKeyRefused: "ApiKeyRefused",
  /**
   * Ready=False and Synced=False: an operation the step needs is missing at the
   * service (a bare 404) or disabled; the message names it and its config key. Nothing
   * is ordered. Retried on the hold backoff.
   */
  OperationMissingTerminal: "OperationMissingTerminal",
  /**
   * Synced=False: a subscription result has a shape or state the operator cannot map;
   * the message names the config key to set. Retried on the hold backoff.
   */
  SubscriptionResultUnknownTerminal: "SubscriptionResultUnknownTerminal",
} as const;
/** One of the shared condition reasons. */
export type ConditionReason = (typeof ConditionReason)[keyof typeof ConditionReason];

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
