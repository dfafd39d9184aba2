/**
 * Pure decisions of the BlockVolume controller: what the attachment asks of the volume
 * as the service shows it (attach, detach, wait, leave it where someone else put it),
 * the Ready condition and the phase. No I/O here; blockvolume/external.ts does the calls.
 *
 * The annotation {@link ATTACHMENT_ANNOTATION} records the instance this object attached
 * (or is attaching) the volume to, written before the attach is sent: it is how a volume
 * attached by someone else is told apart from the object's own attachment, which alone
 * the operator ever detaches.
 */
import { BLOCK_VOLUME_REASONS, type BlockVolumePhase } from "../../crds/blockvolume.js";
import type { BlockVolume as RemoteVolume } from "../../service/index.js";
import type { ReadyState } from "../managed/call.js";

const R = BLOCK_VOLUME_REASONS.names;

/** The instance this object attached (or is attaching) its volume to. */
export const ATTACHMENT_ANNOTATION = "aidc.io/volume-attachment";

/** States in which the service changes the volume and takes no other change. */
const TRANSITIONAL = new Set(["creating", "attaching", "detaching", "deleting"]);

/** What the facts of an attachment decision are. */
export interface AttachmentInput {
  /** The instance the spec asks for (undefined: detached). */
  desired: string | undefined;
  /** The volume's state (assumed words, see VOLUME_STATES). */
  state: string | undefined;
  /** The instance the service shows the volume attached to. */
  attachedTo: string | undefined;
  /** The instance this object attached it to ({@link ATTACHMENT_ANNOTATION}). */
  ours: string | undefined;
}

/** What to do about the attachment. */
export type AttachmentAction =
  /** As the spec asks; nothing to send. */
  | { action: "InSync" }
  /** As the spec asks, attached by someone else to that instance: record it as ours. */
  | { action: "Record"; instanceId: string }
  /** Forget the recorded attachment (the volume is detached and the spec asks for none). */
  | { action: "Forget" }
  | { action: "Attach"; instanceId: string }
  /** Detach from `instanceId` (this object's own attachment). */
  | { action: "Detach"; instanceId: string; next: string | undefined }
  /** The service is changing the volume, or its state is not one to act on. */
  | { action: "Wait"; message: string }
  /** Attached to an instance this object did not attach it to: never detached. */
  | { action: "Foreign"; instanceId: string };

/** Decides the attachment; see {@link AttachmentAction}. */
export function decideAttachment(input: AttachmentInput): AttachmentAction {
  const { desired, state, attachedTo, ours } = input;
  if (state !== undefined && TRANSITIONAL.has(state)) {
    return { action: "Wait", message: `the volume is ${state}` };
  }
  if (attachedTo !== undefined) {
    if (attachedTo === desired) {
      return ours === desired ? { action: "InSync" } : { action: "Record", instanceId: desired };
    }
    if (attachedTo === ours) return { action: "Detach", instanceId: attachedTo, next: desired };
    return { action: "Foreign", instanceId: attachedTo };
  }
  if (state !== "available") {
    return {
      action: "Wait",
      message: `the volume is ${state ?? "in an unreported state"}; it can be attached once available`,
    };
  }
  if (desired !== undefined) return { action: "Attach", instanceId: desired };
  return ours === undefined ? { action: "InSync" } : { action: "Forget" };
}

/**
 * What a delete asks of the attachment: the volume detached. Besides the recorded
 * attachment (`ours`), the one the spec itself asks for (`asked`: spec.attachTo's
 * instanceId, or its CciInstance's instance as resolved now) is this object's too: an
 * adopted volume attached where the spec asks, deleted before a reconcile recorded it,
 * is detached, not waited on as someone else's.
 */
export function decideDeleteAttachment(input: {
  state: string | undefined;
  attachedTo: string | undefined;
  ours: string | undefined;
  asked: string | undefined;
}): AttachmentAction {
  const { state, attachedTo, ours, asked } = input;
  const mine = attachedTo !== undefined && attachedTo === asked ? asked : ours;
  return decideAttachment({ desired: undefined, state, attachedTo, ours: mine });
}

/** The message of a volume attached by someone else. */
export function foreignMessage(volumeId: string, instanceId: string, desired?: string): string {
  const wanted = desired === undefined ? "no instance" : `instance ${desired}`;
  return `volume ${volumeId} is attached to instance ${instanceId}, which this BlockVolume did not attach it to (spec.attachTo asks for ${wanted}); the operator does not detach it. Detach it in the service, or set spec.attachTo to instance ${instanceId}`;
}

/**
 * Ready of a volume not where spec.attachTo asks, which the operator may not move:
 * spec.managementPolicies has no Update (Synced says DriftDetected).
 */
function notMoved(volume: RemoteVolume, desired: string | undefined): ReadyState {
  const where = volume.instanceId === undefined ? "detached" : `on instance ${volume.instanceId}`;
  const wanted = desired === undefined ? "no instance" : `instance ${desired}`;
  return {
    status: "False",
    reason: desired === undefined ? R.Detaching : R.Attaching,
    message: `the volume is ${volume.status ?? "in an unreported state"} (${where}) and spec.attachTo asks for ${wanted}; spec.managementPolicies has no Update, so it is not moved`,
  };
}

/**
 * The Ready condition for the volume and what the attachment asks; `updates`: whether
 * the policies let the operator attach and detach (Update).
 */
export function volumeReady(
  volume: RemoteVolume,
  action: AttachmentAction,
  desired: string | undefined,
  updates = true,
): ReadyState {
  const state = volume.status;
  if (state === "error") {
    return { status: "False", reason: R.VolumeFailed, message: `the volume is in state ${state}` };
  }
  if (state === "creating") {
    return { status: "False", reason: "Creating", message: "the volume is being created" };
  }
  const moving = action.action === "Attach" || action.action === "Detach";
  if (!updates && (moving || (state === "detaching" && desired !== undefined))) {
    return notMoved(volume, desired);
  }
  switch (action.action) {
    case "Foreign":
      return {
        status: "False",
        reason: R.AttachedElsewhere,
        message: foreignMessage(volume.id, action.instanceId, desired),
      };
    case "Attach":
      return {
        status: "False",
        reason: R.Attaching,
        message: `attaching the volume to instance ${action.instanceId}`,
      };
    case "Detach":
      return action.next === undefined
        ? {
            status: "False",
            reason: R.Detaching,
            message: `detaching the volume from instance ${action.instanceId}`,
          }
        : {
            status: "False",
            reason: R.Attaching,
            message: `moving the volume from instance ${action.instanceId} to ${action.next}: detaching first`,
          };
    case "Wait":
      if (state === "attaching" || (state === "detaching" && desired !== undefined)) {
        return {
          status: "False",
          reason: R.Attaching,
          message: `${action.message}; waiting to attach it to instance ${desired}`,
        };
      }
      return {
        status: "False",
        reason: state === "detaching" ? R.Detaching : R.VolumeUnavailable,
        message: action.message,
      };
    default:
      return volume.instanceId !== undefined
        ? { status: "True", reason: R.Attached, message: "" }
        : { status: "True", reason: R.Detached, message: "" };
  }
}

/** The phase for what is known. */
export function volumePhase(input: {
  state: string | undefined;
  bound: boolean;
  creating: boolean;
}): BlockVolumePhase {
  if (!input.bound) return input.creating ? "Creating" : "Pending";
  switch (input.state) {
    case "creating":
      return "Creating";
    case "available":
      return "Available";
    case "attaching":
      return "Attaching";
    case "in-use":
      return "Attached";
    case "detaching":
      return "Detaching";
    case "deleting":
      return "Deleting";
    case "error":
      return "Failed";
    case undefined:
      return "Pending";
    default:
      return "Unknown";
  }
}
