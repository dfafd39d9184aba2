/**
 * The reasons of service connections (reasons.ts has the whole table): which account an
 * object uses, on every kind that calls the service. A ServiceConnection's own state has
 * the reasons of src/crds/serviceconnection.ts.
 */
import { ALL, entry, REFUSAL, type ReasonEntry } from "./entry.js";

/** Connections: which account an object uses. */
export const CONNECTION_REASONS = {
  ConnectionNotAllowed: entry(
    "Terminal",
    REFUSAL,
    ALL,
    "The ServiceConnection the object uses (spec.connectionRef, else the namespace's annotation aidc.io/service-connection) does not allow the object's namespace in spec.allowedNamespaces; no call is made to the service.",
    "Name a connection the namespace may use, or ask the cluster admin to allow the namespace; checked again when the connection changes.",
  ),
  ConnectionNotFound: entry(
    "UnderWay",
    REFUSAL,
    ALL,
    "The ServiceConnection the object names does not exist (yet); no call is made to the service, and the object waits for it.",
  ),
  ConnectionThrottled: entry(
    "UnderWay",
    ["Synced"],
    ALL,
    "The client-side rate limit of the object's connection (spec.limits) is saturated: the call was not sent, and the object is requeued for when the limit has room again, so that one account's queue does not hold the workers every account shares. Raise the connection's limits if it lasts.",
  ),
} as const satisfies Record<string, ReasonEntry>;
