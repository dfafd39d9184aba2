/**
 * The reasons only TrainingTemplate writes (reasons.ts has the whole table).
 */
import { entry, REFUSAL, type ReasonEntry, TT } from "./entry.js";

/** TrainingTemplate. */
export const TRAINING_TEMPLATE_REASONS = {
  NameTakenRefused: entry(
    "Terminal",
    REFUSAL,
    TT,
    "Another template of the service has this name; choose another spec.name.",
    "Choose another spec.name.",
  ),
} as const satisfies Record<string, ReasonEntry>;
