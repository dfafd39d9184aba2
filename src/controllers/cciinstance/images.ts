/**
 * Saving the images of `spec.images`: the durable ledger and the pure decision.
 *
 * Each distinct `{imageName, tag}` is saved once. The ledger of saves lives in the
 * annotation `aidc.io/saved-images` (JSON, keyed `imageName:tag`), not only in the
 * status, because a restored object has no status and must not save again.
 *
 * Crash safety (the service has no image list to look a save up in):
 * 1. Before the save-image call the entry is written with the request time and
 *    attempt count and no answer. The write is conditioned on the resourceVersion
 *    the decision was made from, so a reconcile working from a stale cache (one that
 *    has not seen an earlier marker) fails with a conflict instead of saving twice.
 * 2. The answer is written right after: `imageId`, or `failed` when the call
 *    provably did not act (refused, 429, connection refused).
 * 3. An entry with neither is an unknown outcome: the process stopped between the
 *    two writes, or the call failed after it was sent (timeout, 5xx, unreadable
 *    answer). It is never retried automatically; the status says so, and removing
 *    the entry from spec.images (dropping its ledger entry) and adding it back saves
 *    it again.
 *
 * Saves run one at a time per instance: the service refuses a save while another
 * runs (saveImageStatus true), and only for RUNNING or STOPPED instances.
 */
import {
  CCI_INSTANCE_REASONS,
  type CciImage,
  type CciImageStatus,
} from "../../crds/cciinstance.js";
import { type ConditionInput, capFreeText, capValue, rfc3339 } from "../../runtime/index.js";

const R = CCI_INSTANCE_REASONS.names;

/** The annotation holding the ledger of image saves. */
export const IMAGES_ANNOTATION = "aidc.io/saved-images";

/** What the ledger knows about one image. */
export interface LedgerEntry {
  /** RFC 3339 time of the last save request. */
  at: string;
  /** Save calls made so far (including an unanswered one). */
  attempts: number;
  /** The saved image's id: the save succeeded. */
  imageId?: string;
  /** Why the last call failed without acting; retried with backoff. */
  failed?: string;
  /** Why the outcome is unknown, when known. */
  unknown?: string;
}

/** The ledger: entries keyed by {@link imageKey}. */
export type ImageLedger = Record<string, LedgerEntry>;

/** The ledger key of an image. */
export function imageKey(image: Pick<CciImage, "imageName" | "tag">): string {
  return `${image.imageName}:${image.tag}`;
}

/** Reads the ledger; `undefined` when the annotation is not valid JSON of the expected shape. */
export function parseLedger(raw: string | undefined): ImageLedger | undefined {
  if (raw === undefined || raw.trim() === "") return {};
  try {
    const v: unknown = JSON.parse(raw);
    if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined;
    const out: ImageLedger = {};
    for (const [k, e] of Object.entries(v as Record<string, Partial<LedgerEntry>>)) {
      if (typeof e !== "object" || e === null || typeof e.at !== "string") return undefined;
      out[k] = {
        at: e.at,
        attempts: typeof e.attempts === "number" ? e.attempts : 1,
        ...(typeof e.imageId === "string" ? { imageId: e.imageId } : {}),
        ...(typeof e.failed === "string" ? { failed: e.failed } : {}),
        ...(typeof e.unknown === "string" ? { unknown: e.unknown } : {}),
      };
    }
    return out;
  } catch {
    return undefined;
  }
}

/** Serialises the ledger with sorted keys (an unchanged ledger gives the same text). */
export function formatLedger(ledger: ImageLedger): string {
  const sorted = Object.fromEntries(Object.entries(ledger).sort(([a], [b]) => a.localeCompare(b)));
  return JSON.stringify(sorted);
}

/** Delays between attempts of a failed save: base doubling up to max. */
export interface SaveBackoff {
  baseMs: number;
  maxMs: number;
}

/** The delay after `attempts` failed attempts. */
export function saveRetryDelayMs(attempts: number, backoff: SaveBackoff): number {
  return Math.min(backoff.baseMs * 2 ** Math.max(0, attempts - 1), backoff.maxMs);
}

/** What is known of the instance for saving. */
export interface InstanceForImages {
  /** Remote status (RUNNING, STOPPED, ...). */
  status: string | undefined;
  /** The list's saveImageStatus (true while a save runs); undefined when unknown. */
  saveImageStatus: boolean | undefined;
  /** When the record was fetched. */
  observedAt: Date;
}

/** Inputs of {@link decideImages}. */
export interface ImagesInput {
  images: readonly CciImage[];
  ledger: ImageLedger;
  instance: InstanceForImages;
  now: Date;
  backoff: SaveBackoff;
}

/** What to show and what to do about the images. */
export interface ImagesDecision {
  /** One per distinct spec image, in spec order. */
  statuses: CciImageStatus[];
  /** The image to save now, if any (at most one per reconcile). */
  save?: CciImage;
  /** The ledger without unsaved entries no longer in the spec. */
  ledger: ImageLedger;
  /** The ImagesSaved condition; undefined when spec.images is empty. */
  condition?: ConditionInput;
  /** When the next failed save is due (to requeue no later). */
  retryAt?: Date;
}

const SAVABLE = new Set(["RUNNING", "STOPPED"]);

/** Why nothing can be saved now, or undefined when a save may be sent. */
function blocker(input: ImagesInput): string | undefined {
  const { instance, ledger } = input;
  const status = (instance.status ?? "").toUpperCase();
  if (!SAVABLE.has(status)) {
    return `waiting: the instance is ${instance.status ?? "of unknown status"}; images are saved from a RUNNING or STOPPED instance`;
  }
  if (instance.saveImageStatus === true) {
    return "waiting: the service is saving another image of the instance";
  }
  const latest = Object.values(ledger).reduce<LedgerEntry | undefined>(
    (a, e) => (!a || e.at > a.at ? e : a),
    undefined,
  );
  if (latest && latest.failed === undefined && instance.observedAt <= new Date(latest.at)) {
    return "waiting: the previous save has not been observed yet";
  }
  return undefined;
}

/** Decides the image statuses, the next save and the ImagesSaved condition. */
export function decideImages(input: ImagesInput): ImagesDecision {
  const { ledger, instance, now, backoff } = input;
  const seen = new Set<string>();
  const images = input.images.filter((i) => !seen.has(imageKey(i)) && seen.add(imageKey(i)));
  const wanted = new Set(images.map(imageKey));
  const pruned = Object.fromEntries(
    Object.entries(ledger).filter(([k, e]) => wanted.has(k) || e.imageId !== undefined),
  );
  const latestAt = Object.values(ledger).reduce((m, e) => (e.at > m ? e.at : m), "");
  const blocked = blocker(input);
  const statuses: CciImageStatus[] = [];
  let save: CciImage | undefined;
  let retryAt: Date | undefined;
  for (const image of images) {
    const e = ledger[imageKey(image)];
    const base = { imageName: image.imageName, tag: image.tag };
    if (!e) {
      if (!blocked && !save) save = image;
      statuses.push({ ...base, state: "Pending", ...(blocked ? { message: blocked } : {}) });
      continue;
    }
    const requested = { requestedTime: rfc3339(new Date(e.at)) };
    if (e.imageId !== undefined) {
      const saving =
        instance.observedAt <= new Date(e.at) ||
        (instance.saveImageStatus === true && e.at === latestAt);
      statuses.push({
        ...base,
        imageId: capValue(e.imageId),
        state: saving ? "Saving" : "Saved",
        ...requested,
      });
      continue;
    }
    if (e.failed !== undefined) {
      const due = new Date(new Date(e.at).getTime() + saveRetryDelayMs(e.attempts, backoff));
      if (due <= now) {
        // Due but blocked (or another image goes first): the next poll tries again.
        if (!blocked && !save) save = image;
      } else if (!retryAt || due < retryAt) {
        retryAt = due;
      }
      const next = due <= now ? (blocked ?? "retrying now") : `next attempt at ${rfc3339(due)}`;
      statuses.push({
        ...base,
        state: "Failed",
        message: capFreeText(`attempt ${e.attempts} failed: ${e.failed}; ${next}`),
        ...requested,
      });
      continue;
    }
    statuses.push({
      ...base,
      state: "Failed",
      message: capFreeText(
        `SaveOutcomeUnknown: ${e.unknown ?? "the save was requested but its answer was not recorded (the operator stopped during the call)"}; it is not retried automatically, so that the image is never saved twice: check the service for ${imageKey(image)}, and to save it again remove the entry from spec.images and add it back`,
      ),
      ...requested,
    });
  }
  return {
    statuses,
    ...(save ? { save } : {}),
    ledger: pruned,
    ...(statuses.length > 0 ? { condition: imagesCondition(statuses) } : {}),
    ...(retryAt ? { retryAt } : {}),
  };
}

function imagesCondition(statuses: CciImageStatus[]): ConditionInput {
  const names = (list: CciImageStatus[]) => list.map(imageKey).join(", ");
  const unknown = statuses.filter((s) => s.message?.startsWith("SaveOutcomeUnknown"));
  if (unknown.length > 0) {
    return {
      type: "ImagesSaved",
      status: "False",
      reason: R.SaveOutcomeUnknown,
      message: `the outcome of saving ${names(unknown)} is unknown; see status.images`,
    };
  }
  const failed = statuses.filter((s) => s.state === "Failed");
  if (failed.length > 0) {
    return {
      type: "ImagesSaved",
      status: "False",
      reason: R.SaveRetrying,
      message: `${names(failed)}: ${failed[0]?.message ?? ""}`,
    };
  }
  const done = statuses.filter((s) => s.state === "Saved").length;
  if (done === statuses.length) {
    return { type: "ImagesSaved", status: "True", reason: R.Saved, message: `${done} saved` };
  }
  return {
    type: "ImagesSaved",
    status: "False",
    reason: R.Saving,
    message: `${done} of ${statuses.length} saved`,
  };
}
