/**
 * The acting half of image saving: writes the ledger marker, calls save-image, and
 * records the answer (see images.ts for the protocol and why it never saves twice).
 */
import {
  CCI_INSTANCE_REASONS,
  type CciImage,
  type CciImageStatus,
} from "../../crds/cciinstance.js";
import {
  type ConditionInput,
  ConflictError,
  errorMessage,
  keyOf,
  type ReconcileContext,
  type ResourceDescriptor,
  setAnnotations,
} from "../../runtime/index.js";
import { reasonEvents } from "../event-reasons.js";
import {
  decideImages,
  formatLedger,
  IMAGES_ANNOTATION,
  type ImageLedger,
  type InstanceForImages,
  imageKey,
  type LedgerEntry,
  parseLedger,
  type SaveBackoff,
} from "./images.js";
import type { CciObject } from "./objects.js";

/** The save-image operation (`CciOperations.saveImage`, service/kinds/cciinstance.ts). */
export interface ImageSaver {
  saveImage(id: string, req: { imageName: string; tag: string }): Promise<{ imageId: string }>;
}

/** Inputs of {@link saveImages}. */
export interface SaveImagesInput {
  ctx: ReconcileContext;
  obj: CciObject;
  resource: ResourceDescriptor;
  instanceId: string;
  images: readonly CciImage[];
  /** The parsed ledger; undefined when the annotation is unreadable. */
  ledger: ImageLedger | undefined;
  instance: InstanceForImages;
  service: ImageSaver;
  backoff: SaveBackoff;
}

/** The object after any writes, and what to show. */
export interface SaveImagesResult {
  obj: CciObject;
  statuses: CciImageStatus[];
  condition?: ConditionInput;
  retryAt?: Date;
}

const ANSWER_ATTEMPTS = 5;

/** Decides, saves at most one image, records the outcome, and returns the statuses. */
export async function saveImages(input: SaveImagesInput): Promise<SaveImagesResult> {
  const { ctx, resource, images } = input;
  let obj = input.obj;
  if (input.ledger === undefined) return unreadable(obj, images);
  const ledger = input.ledger;
  const decide = (l: ImageLedger) =>
    decideImages({
      images,
      ledger: l,
      instance: input.instance,
      now: ctx.clock.now(),
      backoff: input.backoff,
    });
  let decision = decide(ledger);
  if (!decision.save && formatLedger(decision.ledger) === formatLedger(ledger)) {
    return { obj, ...result(decision) };
  }
  const save = decision.save;
  if (!save) {
    // Only pruning: unsaved entries removed from spec.images are forgotten.
    obj = await setAnnotations(ctx.kube, resource, obj, {
      [IMAGES_ANNOTATION]: formatLedger(decision.ledger),
    });
    return { obj, ...result(decision) };
  }
  const key = imageKey(save);
  const marker: LedgerEntry = {
    at: ctx.clock.now().toISOString(),
    attempts: (decision.ledger[key]?.attempts ?? 0) + 1,
  };
  // The marker write is conditioned on the object the decision was made from: a
  // decision from a stale cache fails here, before anything is sent.
  obj = await setAnnotations(ctx.kube, resource, obj, {
    [IMAGES_ANNOTATION]: formatLedger({ ...decision.ledger, [key]: marker }),
  });
  let answer: LedgerEntry;
  try {
    const { imageId } = await input.service.saveImage(input.instanceId, save);
    answer = { ...marker, imageId };
    reasonEvents(ctx.events).normal(
      obj,
      "ImageSaveRequested",
      `saving ${key} from CCI instance ${input.instanceId}: image ${imageId}`,
    );
  } catch (err) {
    const unknown = (err as { outcomeUnknown?: unknown }).outcomeUnknown === true;
    answer = unknown
      ? { ...marker, unknown: errorMessage(err) }
      : { ...marker, failed: errorMessage(err) };
    reasonEvents(ctx.events).warning(
      obj,
      unknown ? "ImageSaveOutcomeUnknown" : "ImageSaveFailed",
      `saving ${key}: ${errorMessage(err)}`,
    );
  }
  obj = await recordAnswer(ctx, resource, obj, key, answer);
  decision = decide(
    parseLedger(obj.metadata?.annotations?.[IMAGES_ANNOTATION]) ?? { [key]: answer },
  );
  return { obj, ...result(decision) };
}

function result(d: ReturnType<typeof decideImages>): Omit<SaveImagesResult, "obj"> {
  return {
    statuses: d.statuses,
    ...(d.condition ? { condition: d.condition } : {}),
    ...(d.retryAt ? { retryAt: d.retryAt } : {}),
  };
}

/**
 * Writes the answer into the ledger. A conflict (the user edited the object during
 * the call) re-reads the object and merges the entry in again: losing an image id
 * here would turn a success into an unknown outcome.
 */
async function recordAnswer(
  ctx: ReconcileContext,
  resource: ResourceDescriptor,
  obj: CciObject,
  key: string,
  answer: LedgerEntry,
): Promise<CciObject> {
  let current: CciObject | undefined = obj;
  for (let attempt = 1; current; attempt++) {
    const ledger = parseLedger(current.metadata?.annotations?.[IMAGES_ANNOTATION]) ?? {};
    try {
      return await setAnnotations(ctx.kube, resource, current, {
        [IMAGES_ANNOTATION]: formatLedger({ ...ledger, [key]: answer }),
      });
    } catch (err) {
      if (!(err instanceof ConflictError) || attempt >= ANSWER_ATTEMPTS) throw err;
      current = await ctx.kube.get<CciObject>(resource, keyOf(current));
    }
  }
  return obj;
}

function unreadable(obj: CciObject, images: readonly CciImage[]): SaveImagesResult {
  const message = `the annotation ${IMAGES_ANNOTATION} (the record of saved images) is not readable; no image is saved until it is fixed or removed`;
  return {
    obj,
    statuses: images.map((i) => ({
      imageName: i.imageName,
      tag: i.tag,
      state: "Pending",
      message,
    })),
    ...(images.length > 0
      ? {
          condition: {
            type: "ImagesSaved",
            status: "False",
            reason: CCI_INSTANCE_REASONS.names.SaveOutcomeUnknown,
            message,
          },
        }
      : {}),
  };
}
