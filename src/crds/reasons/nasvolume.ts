/**
 * The reasons only NasVolume writes (reasons.ts has the whole table).
 */
import { entry, NAS, REFUSAL, type ReasonEntry } from "./entry.js";

/** NasVolume. */
export const NAS_VOLUME_REASONS = {
  ProductNotFoundRefused: entry(
    "Terminal",
    REFUSAL,
    NAS,
    "The NAS product is not offered (in that compute center); nothing is ordered.",
    "Use a productCode of the service's NAS product list (and its compute center: spec.aidcId).",
  ),
  CapacityRefused: entry(
    "Terminal",
    REFUSAL,
    NAS,
    "capacityGB is outside what the product allows; nothing is ordered or scaled.",
    "Set capacityGB within the product's bounds (the message gives them).",
  ),
  ProductUnavailable: entry(
    "UnderWay",
    REFUSAL,
    NAS,
    "The NAS product cannot be provisioned right now; checked again every poll.",
  ),
  Unavailable: entry(
    "UnderWay",
    ["Ready"],
    ["NasVolume", "CciInstance"],
    "The remote resource exists but is in a state that is not usable yet.",
  ),
  RemoteCapacityUnknown: entry(
    "UnderWay",
    ["Synced"],
    NAS,
    "The service did not report the storage's quota as a number, so a capacity change cannot be computed.",
  ),
  ScaleOutcomeUnknown: entry(
    "Terminal",
    ["Synced"],
    NAS,
    "A scale was sent but does not show in the quota; it is not sent twice.",
    "Check the storage, then remove the aidc.io/nas-scale annotation.",
  ),
  ShrinkBelowUsedRefused: entry(
    "Terminal",
    ["Synced"],
    NAS,
    "capacityGB is below the amount in use; the storage keeps its size.",
    "Free space in the storage first, or keep capacityGB at or above the amount in use.",
  ),
} as const satisfies Record<string, ReasonEntry>;
