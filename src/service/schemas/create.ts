/**
 * How the operator finds what a create made. Every create carries a client token,
 * recorded before it is sent, and the owner's mark (controllers/managed/tenancy.ts), in a
 * description or a task's environment, so that a list finds it again after a crash. An
 * asynchronous create answers a subscription key, whose result (a shape the spec does not
 * show: the variants docs/service-assumptions.md lists) gives the outcome and the created
 * id; a state word matching no known one is an error naming it, never a guess.
 */
import { z } from "zod";
import { fold, isServiceId, SERVICE_ID_RULE } from "./primitives.js";

/** Environment variable of a training task that holds the client token. */
export const CLIENT_TOKEN_ENV = "AIDC_CLIENT_TOKEN";

const MARKER_PREFIX = "[aidc-token:";

/** `[aidc-token:<token>]`, appended to a description. */
export function clientTokenMarker(token: string): string {
  return `${MARKER_PREFIX}${token}]`;
}

/** `description` with the token marker appended, replacing one already present. */
export function withClientTokenMarker(description: string | undefined, token: string): string {
  const base = stripClientTokenMarker(description ?? "");
  return base ? `${base} ${clientTokenMarker(token)}` : clientTokenMarker(token);
}

/** `description` without token or owner markers. */
export function stripClientTokenMarker(description: string): string {
  return description.replace(/\s*\[aidc-(?:token|owner):[^\]]*\]/g, "").trim();
}

/** Environment variable of a training task (and template) that holds the owner mark. */
export const OWNER_MARK_ENV = "AIDC_OWNER";

/** `description` with the token marker and the owner marker `[aidc-owner:<mark>]`. */
export function withCreateMarkers(
  description: string | undefined,
  token: string,
  owner: string,
): string {
  return `${withClientTokenMarker(description, token)} [aidc-owner:${owner}]`;
}

/** `description` with the owner marker alone (a template's, found again by its name). */
export function withOwnerMarker(description: string | undefined, owner: string): string {
  const base = stripClientTokenMarker(description ?? "");
  return base ? `${base} [aidc-owner:${owner}]` : `[aidc-owner:${owner}]`;
}

/** The owner mark text in a description's marker, if any. */
export function ownerMarkInDescription(description: string | undefined): string | undefined {
  const m = /\[aidc-owner:([^\]]*)\]/.exec(description ?? "");
  return m?.[1] || undefined;
}

/** The token in a description's marker, if any. */
export function clientTokenInDescription(description: string | undefined): string | undefined {
  const m = /\[aidc-token:([^\]]*)\]/.exec(description ?? "");
  return m?.[1] || undefined;
}

export const SUBSCRIPTION_STATES = ["Pending", "Succeeded", "Failed"] as const;
export type SubscriptionState = (typeof SUBSCRIPTION_STATES)[number];

/** The canonical subscription result; `instanceId` once Succeeded, if the service says it. */
export interface SubscriptionResult {
  key: string;
  state: SubscriptionState;
  instanceId?: string;
  message?: string;
  /** The answer held no result at all (null or `{}`), read as Pending. */
  empty?: true;
}

const STATE_WORDS: Record<SubscriptionState, readonly string[]> = {
  Pending: [
    "pending",
    "processing",
    "inprogress",
    "running",
    "creating",
    "waiting",
    "accepted",
    "submitted",
    "queued",
    "init",
    "initial",
    "new",
    "provisioning",
  ],
  Succeeded: [
    "succeeded",
    "success",
    "successful",
    "completed",
    "complete",
    "done",
    "finished",
    "ok",
    "created",
  ],
  Failed: [
    "failed",
    "fail",
    "failure",
    "error",
    "rejected",
    "cancelled",
    "canceled",
    "timeout",
    "expired",
  ],
};

/** Fields read, in order, for each part of the result. */
const STATE_FIELDS = ["state", "status", "subscriptionStatus", "orderStatus", "phase", "result"];
const ID_FIELDS = [
  "instanceId",
  "resourceId",
  "taskId",
  "trainingTaskId",
  "storageId",
  "nasStorageId",
  "nasId",
];
const ID_LIST_FIELDS = ["instanceIds", "resourceIds"];
const MESSAGE_FIELDS = [
  "message",
  "reason",
  "errorMessage",
  "errorMsg",
  "failReason",
  "failMessage",
  "msg",
  "error",
];
const NESTED_FIELDS = ["result", "detail", "instance", "data"];

/** The subscription state a word stands for, ignoring case, `_`, `-` and spaces. */
export function subscriptionStateOf(word: string): SubscriptionState | undefined {
  const folded = fold(word);
  for (const state of SUBSCRIPTION_STATES) {
    if (STATE_WORDS[state].includes(folded)) return state;
  }
  return undefined;
}

function firstText(objects: Record<string, unknown>[], fields: string[]): string | undefined {
  for (const o of objects) {
    for (const f of fields) {
      const v = o[f];
      if (typeof v === "string" && v.trim() !== "") return v.trim();
      if (typeof v === "number") return String(v);
    }
  }
  return undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * How a service's subscription results read where this module does not recognise them
 * (config `service.subscriptionResult`): fields read before the built-in ones, and state
 * values (as text, compared like words) over the built-in words.
 */
export interface SubscriptionResultMapping {
  /** The field of a create's answer holding the subscription key. */
  keyField?: string;
  stateField?: string;
  instanceIdField?: string;
  messageField?: string;
  states?: Record<string, SubscriptionState>;
}

export const SUBSCRIPTION_RESULT_CONFIG_KEY = "service.subscriptionResult";

/** The state `word` stands for: the mapping's `states` first, then the built-in words. */
function mappedState(
  word: string,
  mapping: SubscriptionResultMapping,
): SubscriptionState | undefined {
  const folded = fold(word);
  for (const [value, state] of Object.entries(mapping.states ?? {})) {
    if (fold(value) === folded) return state;
  }
  return subscriptionStateOf(word);
}

/**
 * Reads the `data` of a subscription-result answer for `key`: a bare state word, or an
 * object with its state, id and message in the fields above (or a boolean `success`), one
 * nested level included; null or `{}` is Pending. What it cannot read is an issue naming
 * the config key to set.
 */
export function subscriptionResultSchema(key: string, mapping: SubscriptionResultMapping = {}) {
  const stateFields = mapping.stateField ? [mapping.stateField, ...STATE_FIELDS] : STATE_FIELDS;
  const idFields = mapping.instanceIdField ? [mapping.instanceIdField, ...ID_FIELDS] : ID_FIELDS;
  const unknownState = (word: string) =>
    `unknown subscription state "${word}" (known: ${[...Object.keys(mapping.states ?? {}), ...Object.values(STATE_WORDS).flat()].join(", ")}); map it to Pending, Succeeded or Failed with ${SUBSCRIPTION_RESULT_CONFIG_KEY}.states in the operator configuration`;
  return z.unknown().transform((data, ctx): SubscriptionResult => {
    if (data === null || data === undefined || (isObject(data) && Object.keys(data).length === 0)) {
      return { key, state: "Pending", empty: true };
    }
    if (typeof data === "string" || typeof data === "number") {
      const state = mappedState(String(data), mapping);
      if (state) return { key, state };
      ctx.addIssue({ code: "custom", message: unknownState(String(data)) });
      return z.NEVER;
    }
    if (!isObject(data)) {
      ctx.addIssue({ code: "custom", message: "expected an object or a state word" });
      return z.NEVER;
    }
    const layers = [data, ...NESTED_FIELDS.map((f) => data[f]).filter(isObject)];
    const word = firstText(layers, stateFields);
    let state: SubscriptionState | undefined;
    if (word !== undefined) {
      state = mappedState(word, mapping);
      if (!state) {
        ctx.addIssue({ code: "custom", message: unknownState(word), path: ["state"] });
        return z.NEVER;
      }
    } else if (typeof data.success === "boolean") {
      state = data.success ? "Succeeded" : "Failed";
    } else {
      ctx.addIssue({
        code: "custom",
        message: `no state field (read: ${stateFields.join(", ")}; fields present: ${Object.keys(data).join(", ")}); name the field with ${SUBSCRIPTION_RESULT_CONFIG_KEY}.stateField in the operator configuration`,
        path: ["state"],
      });
      return z.NEVER;
    }
    const result: SubscriptionResult = {
      key: firstText([data], ["key", "subscriptionKey", "resultKey"]) ?? key,
      state,
    };
    let instanceId = firstText(layers, idFields);
    if (instanceId === undefined) {
      for (const o of layers) {
        for (const f of ID_LIST_FIELDS) {
          const list = o[f];
          if (instanceId === undefined && Array.isArray(list) && list.length > 0) {
            instanceId = String(list[0]);
          }
        }
      }
    }
    if (instanceId !== undefined && !isServiceId(instanceId)) {
      ctx.addIssue({
        code: "custom",
        message: `expected a service id (${SERVICE_ID_RULE})`,
        path: ["instanceId"],
      });
      return z.NEVER;
    }
    if (instanceId !== undefined) result.instanceId = instanceId;
    const message =
      (mapping.messageField ? firstText(layers, [mapping.messageField]) : undefined) ??
      firstText([data], MESSAGE_FIELDS);
    if (message !== undefined) result.message = message;
    return result;
  });
}

/** Fields of a create's answer read, in order, for its subscription key. */
const KEY_FIELDS = ["subscriptionKey", "key", "resultKey", "orderId"];

/**
 * Reads the answer of an asynchronous create (the spec: "a result key"): the key as text
 * or a number, or an object holding it in `mapping.keyField` or the fields above, one
 * nested level included (an `instanceId` beside it is left to the result). A field it
 * cannot find is an issue naming the config key to set.
 */
export function subscriptionKeySchema(mapping: SubscriptionResultMapping = {}) {
  const fields = mapping.keyField ? [mapping.keyField, ...KEY_FIELDS] : KEY_FIELDS;
  return z.unknown().transform((data, ctx): string => {
    let key = typeof data === "number" ? String(data) : data;
    if (isObject(data)) {
      key = firstText([data, ...NESTED_FIELDS.map((f) => data[f]).filter(isObject)], fields);
      if (key === undefined) {
        const message = `no subscription key field (read: ${fields.join(", ")}; fields present: ${Object.keys(data).join(", ")}); name the field with ${SUBSCRIPTION_RESULT_CONFIG_KEY}.keyField in the operator configuration`;
        ctx.addIssue({ code: "custom", message });
        return z.NEVER;
      }
    }
    if (typeof key === "string" && isServiceId(key)) return key;
    ctx.addIssue({
      code: "custom",
      message: `expected the subscription result key (${SERVICE_ID_RULE})`,
    });
    return z.NEVER;
  });
}
