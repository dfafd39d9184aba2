/**
 * A capacity change of a NAS storage as a pure decision: what spec.capacityGB asks of
 * the storage's quota (scale by the difference), with the scale recorded in
 * {@link SCALE_ANNOTATION} before its call (external.ts's `update` writes it) so that a
 * scale whose outcome is unknown is waited for and never sent twice. `decideSync`
 * (decisions.ts) asks it when the spec's capacity differs from the quota.
 */
import { NAS_VOLUME_REASONS } from "../../crds/nasvolume.js";
import type { ConditionReason } from "../../crds/reasons.js";

const R = NAS_VOLUME_REASONS.names;

/** Annotation recording the last capacity change, written BEFORE the scale call. */
export const SCALE_ANNOTATION = "aidc.io/nas-scale";

/** A capacity change as recorded in {@link SCALE_ANNOTATION}. */
export interface ScaleRecord {
  scaleType: "ScaleUp" | "ScaleDown";
  /** GB added or removed (the service takes the change). */
  capacityGB: number;
  fromGB: number;
  toGB: number;
  /** RFC 3339 time the request was about to be sent. */
  requestedTime: string;
}

/** The remote facts a capacity decision needs. */
export interface CapacityInput {
  /** Remote quota and used amount in GB (NaN when the service sent no number). */
  quotaGB: number;
  usedGB: number;
  remoteStatus: string | undefined;
  /** The last recorded scale request. */
  lastScale: ScaleRecord | undefined;
  /** Milliseconds since `lastScale.requestedTime`. */
  lastScaleAgeMs: number;
  /** How long a sent scale may take to show in the quota before it counts as lost. */
  scaleSettleMs: number;
}

/** The scale a capacity change asks for, or why it cannot be made now. */
export type CapacityAction =
  | { action: "Scale"; record: Omit<ScaleRecord, "requestedTime"> }
  | { action: "Wait"; message: string }
  | { action: "Refuse"; reason: ConditionReason; message: string };

/**
 * What a `desired` capacity other than the quota asks. A scale recorded but not yet
 * visible in the quota is waited for, and never sent twice: after `scaleSettleMs` it is
 * refused as ScaleOutcomeUnknown until the user removes the record (or the quota shows
 * the change). A shrink below the used amount is refused.
 */
export function decideCapacity(input: CapacityInput, desired: number): CapacityAction {
  if (!Number.isFinite(input.quotaGB)) {
    return {
      action: "Refuse",
      reason: R.RemoteCapacityUnknown,
      message:
        "the service did not report the storage's quota as a number, so the change cannot be computed",
    };
  }
  const last = input.lastScale;
  if (last && last.toGB !== input.quotaGB && last.fromGB === input.quotaGB) {
    // The recorded change was (maybe) sent but does not show: sending it again could
    // apply it twice, so the operator waits, and after the settle time asks the user.
    if (input.lastScaleAgeMs < input.scaleSettleMs) {
      return {
        action: "Wait",
        message: `a ${last.scaleType} to ${last.toGB} GB was sent; waiting for the quota to show it`,
      };
    }
    return {
      action: "Refuse",
      reason: R.ScaleOutcomeUnknown,
      message: `a ${last.scaleType} by ${last.capacityGB} GB (${last.fromGB} → ${last.toGB} GB) was requested at ${last.requestedTime || "an unknown time"} but the quota still shows ${input.quotaGB} GB; it is not sent again automatically, since a second request could apply it twice. Check the storage, then remove the ${SCALE_ANNOTATION} annotation to let the operator send the change again`,
    };
  }
  if (input.remoteStatus !== "Running") {
    return {
      action: "Wait",
      message: `the storage is ${input.remoteStatus ?? "not running"}; it can be scaled once Running`,
    };
  }
  if (desired < input.quotaGB && Number.isFinite(input.usedGB) && desired < input.usedGB) {
    return {
      action: "Refuse",
      reason: R.ShrinkBelowUsedRefused,
      message: `capacityGB ${desired} is below the ${input.usedGB} GB in use; the storage stays at ${input.quotaGB} GB (shrinking would lose data)`,
    };
  }
  return {
    action: "Scale",
    record: {
      scaleType: desired > input.quotaGB ? "ScaleUp" : "ScaleDown",
      capacityGB: Math.abs(desired - input.quotaGB),
      fromGB: input.quotaGB,
      toGB: desired,
    },
  };
}
