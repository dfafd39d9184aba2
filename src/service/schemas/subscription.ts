/**
 * The subscription result. The spec does not show the record returned by the
 * subscription-result queries, so this module defines a canonical shape (which the
 * emulator returns) and reads plausible variants into it; docs/service-assumptions.md
 * lists them. A state word that matches none of the known ones is an error naming the
 * value, never a guess.
 */

import { z } from "zod";
import { isServiceId, SERVICE_ID_RULE } from "../ids.js";

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

/** The subscription state a word stands for, ignoring case, `_`, `-` and spaces. */
export function subscriptionStateOf(word: string): SubscriptionState | undefined {
  const folded = word.toLowerCase().replace(/[\s_-]/g, "");
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
 * A schema reading the `data` of a subscription-result answer for `key`: a bare state
 * word, or an object whose state is in `state`/`status`/… (or a boolean `success`),
 * whose instance id is in `instanceId`/`resourceId`/`taskId`/… (or the first of
 * `instanceIds`), and whose message is in `message`/`reason`/…, one nested level
 * (`result`, `detail`, …) included. null or an empty object reads as Pending.
 */
export function subscriptionResultSchema(key: string) {
  return z.unknown().transform((data, ctx): SubscriptionResult => {
    if (data === null || data === undefined || (isObject(data) && Object.keys(data).length === 0)) {
      return { key, state: "Pending" };
    }
    if (typeof data === "string") {
      const state = subscriptionStateOf(data);
      if (state) return { key, state };
      ctx.addIssue({ code: "custom", message: `unknown subscription state "${data}"` });
      return z.NEVER;
    }
    if (!isObject(data)) {
      ctx.addIssue({ code: "custom", message: "expected an object or a state word" });
      return z.NEVER;
    }
    const layers = [data, ...NESTED_FIELDS.map((f) => data[f]).filter(isObject)];
    const word = firstText(layers, STATE_FIELDS);
    let state: SubscriptionState | undefined;
    if (word !== undefined) {
      state = subscriptionStateOf(word);
      if (!state) {
        ctx.addIssue({
          code: "custom",
          message: `unknown subscription state "${word}" (known: ${Object.values(STATE_WORDS).flat().join(", ")})`,
          path: ["state"],
        });
        return z.NEVER;
      }
    } else if (typeof data.success === "boolean") {
      state = data.success ? "Succeeded" : "Failed";
    } else {
      ctx.addIssue({
        code: "custom",
        message: "no state field (state, status, …)",
        path: ["state"],
      });
      return z.NEVER;
    }
    const result: SubscriptionResult = {
      key: firstText([data], ["key", "subscriptionKey", "resultKey"]) ?? key,
      state,
    };
    let instanceId = firstText(layers, ID_FIELDS);
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
    const message = firstText([data], MESSAGE_FIELDS);
    if (message !== undefined) result.message = message;
    return result;
  });
}
