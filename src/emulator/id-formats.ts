/**
 * The shapes of the ids and subscription keys the emulator hands out (`idFormat`,
 * `subscriptionKeyFormat`, `createAnswerShape` of EmulatorBehaviour): its own
 * `nas-<tag>000001`, numbers (JSON numbers on the wire, accepted as numbers or text in
 * requests) or UUIDs; a create's key bare or in an object.
 */
import { randomUUID } from "node:crypto";

/** Id shapes (see EmulatorBehaviour.idFormat). */
export const ID_FORMATS = ["default", "numeric", "uuid"] as const;
/** An id shape. */
export type IdFormat = (typeof ID_FORMATS)[number];

/** Subscription key shapes (see EmulatorBehaviour.subscriptionKeyFormat). */
export const SUBSCRIPTION_KEY_FORMATS = ["string", "number"] as const;
/** A subscription key shape. */
export type SubscriptionKeyFormat = (typeof SUBSCRIPTION_KEY_FORMATS)[number];

/** Shapes of a create's answer (see EmulatorBehaviour.createAnswerShape). */
export const CREATE_ANSWER_SHAPES = [
  "key",
  "subscriptionKey",
  "keyObject",
  "orderId",
  "keyAndInstanceId",
  "renamedField",
] as const;
/** A shape of a create's answer. */
export type CreateAnswerShape = (typeof CREATE_ANSWER_SHAPES)[number];

/** The `data` a create answers in `shape` for subscription `key` of resource `instanceId`. */
export function createAnswer(shape: CreateAnswerShape, key: string, instanceId?: string): unknown {
  if (shape === "subscriptionKey") return { subscriptionKey: key };
  if (shape === "keyObject") return { key };
  if (shape === "orderId") return { orderId: key };
  if (shape === "renamedField") return { requestNo: key };
  if (shape === "keyAndInstanceId") {
    return instanceId === undefined
      ? { subscriptionKey: key }
      : { subscriptionKey: key, instanceId };
  }
  return key;
}

/**
 * A numeric id: `1`, 8 digits drawn from `prefix` and `tag` (so that kinds, accounts and
 * emulators differ) and the counter in 6: 15 digits, below 2^53, exact as a JSON number.
 */
export function numericId(prefix: string, tag: string, n: number): string {
  let hash = 0;
  for (const c of `${prefix}/${tag}`) hash = (hash * 31 + c.charCodeAt(0)) % 100_000_000;
  return `1${String(hash).padStart(8, "0")}${String(n % 1_000_000).padStart(6, "0")}`;
}

/** The id number `n` of `prefix` in `format`. */
export function formatId(format: IdFormat, prefix: string, tag: string, n: number): string {
  if (format === "numeric") return numericId(prefix, tag, n);
  if (format === "uuid") return randomUUID();
  return `${prefix}-${tag}${String(n).padStart(6, "0")}`;
}

const NUMERIC_ID = /^1\d{14}$/;

/** `data` with every numeric id (text of {@link numericId}) written as a JSON number. */
export function idsAsNumbers(data: unknown): unknown {
  if (typeof data === "string") return NUMERIC_ID.test(data) ? Number(data) : data;
  if (Array.isArray(data)) return data.map(idsAsNumbers);
  if (data === null || typeof data !== "object") return data;
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, idsAsNumbers(v)]));
}

/** A request body with the numeric ids it holds as numbers (of {@link numericId}) as text. */
export function idsAsText(body: unknown): unknown {
  if (typeof body === "number") return NUMERIC_ID.test(String(body)) ? String(body) : body;
  if (Array.isArray(body)) return body.map(idsAsText);
  if (body === null || typeof body !== "object") return body;
  return Object.fromEntries(Object.entries(body).map(([k, v]) => [k, idsAsText(v)]));
}
