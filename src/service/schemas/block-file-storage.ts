/**
 * Block volumes and file systems. The spec lists their paths but shows no payloads,
 * so requests are passed through as given and answers are kept whole, with `id` read
 * when present (an assumption: a create answers the new object with its id).
 */
import { z } from "zod";
import { optionalString } from "./primitives.js";

/** A JSON object passed through to the service unchanged. */
export type JsonObject = Record<string, unknown>;

/** A request body of these operations: any JSON object. */
export const jsonObjectBodySchema = z.record(z.string(), z.unknown());

/**
 * An answer of these operations: the object as sent, with `id` as text when present;
 * a non-object answer (the usual empty `{}` included) becomes `{}`.
 */
export const storageObjectSchema = z.preprocess(
  (v) => (v !== null && typeof v === "object" && !Array.isArray(v) ? v : {}),
  z.looseObject({ id: optionalString }),
);

/** A block volume, file system or mount, as the service answered it. */
export type StorageObject = z.infer<typeof storageObjectSchema>;
