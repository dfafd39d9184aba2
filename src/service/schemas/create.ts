/**
 * How the operator finds what a create made. Every create carries a client token,
 * recorded before it is sent, and the owner's mark (controllers/managed/tenancy.ts): in
 * the description of a NAS, block volume or file system, in a task's environment (and a
 * template's, whose description holds the mark too), so
 * that a list finds the resource again after a crash. An asynchronous create answers a
 * subscription key, whose result (a record the spec does not show: one canonical shape,
 * read from the variants docs/service-assumptions.md lists) gives the outcome and the
 * created id; a state word matching no known one is an error naming it, never a guess.
 */
import { z } from "zod";
import { isServiceId, SERVICE_ID_PATTERN, SERVICE_ID_RULE } from "./primitives.js";

/** Environment variable of a training task that holds the client token. */
export const CLIENT_TOKEN_ENV = "AIDC_CLIENT_TOKEN";

const MARKER_PREFIX = "[aidc-token:";

/** The marker appended to a description: `[aidc-token:<token>]`. */
export function clientTokenMarker(token: string): string {
  return `${MARKER_PREFIX}${token}]`;
}

/**
 * `description` with the token marker appended (separated by a space), replacing a
 * marker already present so that the description never grows.
 */
export function withClientTokenMarker(description: string | undefined, token: string): string {
  const base = stripClientTokenMarker(description ?? "");
  return base ? `${base} ${clientTokenMarker(token)}` : clientTokenMarker(token);
}

/** `description` without any token or owner marker, for showing to people or comparing with a spec. */
export function stripClientTokenMarker(description: string): string {
  return description.replace(/\s*\[aidc-(?:token|owner):[^\]]*\]/g, "").trim();
}

/** Environment variable of a training task (and template) that holds the owner mark. */
export const OWNER_MARK_ENV = "AIDC_OWNER";

/**
 * `description` with the token marker and the owner marker `[aidc-owner:<mark>]`
 * (controllers/managed/tenancy.ts), each replacing one already present.
 */
export function withCreateMarkers(
  description: string | undefined,
  token: string,
  owner: string,
): string {
  return `${withClientTokenMarker(description, token)} [aidc-owner:${owner}]`;
}

/**
 * `description` with the owner marker alone, replacing markers already present: a
 * template's, found again by its name, not by a token.
 */
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

/** States of an asynchronous create. */
export const SUBSCRIPTION_STATES = ["Pending", "Succeeded", "Failed"] as const;
/** A subscription state. */
export type SubscriptionState = (typeof SUBSCRIPTION_STATES)[number];

/** The canonical subscription result. */
export interface SubscriptionResult {
  /** The subscription result key that was queried. */
  key: string;
  state: SubscriptionState;
  /** Id of the created task or NAS, once Succeeded (absent if the service does not say). */
  instanceId?: string;
  /** The service's explanation, notably of a failure. */
  message?: string;
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

/** `word` lower-cased without `_`, `-` and spaces: how state words are compared. */
const fold = (word: string) => word.toLowerCase().replace(/[\s_-]/g, "");

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
 * How a service's subscription results read, where they differ from what this module
 * recognises by itself (the operator config's `service.subscriptionResult`). Field
 * names are read before the built-in ones, at the top level or one nested level.
 */
export interface SubscriptionResultMapping {
  /** The field holding the state (e.g. `orderState`). */
  stateField?: string;
  /** The field holding the created resource's id (e.g. `createdResourceId`). */
  instanceIdField?: string;
  /** The field holding the service's explanation (e.g. `remark`). */
  messageField?: string;
  /**
   * State values (words or numbers, as text; case, `_`, `-` and spaces ignored) → the
   * outcome, over the built-in words: `{ "1": "Pending", "2": "Succeeded", "3": "Failed" }`.
   */
  states?: Record<string, SubscriptionState>;
}

/** The config key of the mapping, for messages. */
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
 * A schema reading the `data` of a subscription-result answer for `key`: a bare state
 * word, or an object whose state is in `state`/`status`/… (or a boolean `success`),
 * whose instance id is in `instanceId`/`resourceId`/`taskId`/… (or the first of
 * `instanceIds`), and whose message is in `message`/`reason`/…, one nested level
 * (`result`, `detail`, …) included. null or an empty object reads as Pending. The
 * `mapping` (operator config) names other fields and maps other state values (an
 * integer `status`, for example); a state or shape it cannot read is an issue that
 * names the config key to set.
 */
export function subscriptionResultSchema(key: string, mapping: SubscriptionResultMapping = {}) {
  const stateFields = mapping.stateField ? [mapping.stateField, ...STATE_FIELDS] : STATE_FIELDS;
  const idFields = mapping.instanceIdField ? [mapping.instanceIdField, ...ID_FIELDS] : ID_FIELDS;
  const unknownState = (word: string) =>
    `unknown subscription state "${word}" (known: ${[...Object.keys(mapping.states ?? {}), ...Object.values(STATE_WORDS).flat()].join(", ")}); map it to Pending, Succeeded or Failed with ${SUBSCRIPTION_RESULT_CONFIG_KEY}.states in the operator configuration`;
  return z.unknown().transform((data, ctx): SubscriptionResult => {
    if (data === null || data === undefined || (isObject(data) && Object.keys(data).length === 0)) {
      return { key, state: "Pending" };
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

/** Data of the asynchronous creates: the subscription result key (a number reads as text). */
export const subscriptionKeySchema = z.preprocess(
  (v) => (typeof v === "number" ? String(v) : v),
  z.string().regex(SERVICE_ID_PATTERN, `expected the subscription result key (${SERVICE_ID_RULE})`),
);
