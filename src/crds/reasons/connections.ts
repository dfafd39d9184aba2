/**
 * The reasons of service connections (reasons.ts has the whole table): which account
 * an object uses (on every kind that calls the service), and the state of a
 * ServiceConnection itself.
 */
import { ALL, CONN, entry, REFUSAL, type ReasonEntry } from "./entry.js";

/** Connections: which account an object uses, and the ServiceConnection's own state. */
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
    "The client-side rate limit of the object's connection (spec.limits) is saturated: the call was not sent, and the reconcile is retried with backoff so that one account's queue does not hold the workers every account shares. Raise the connection's limits if it lasts.",
  ),
  Connected: entry(
    "Ok",
    ["Ready"],
    CONN,
    "The service accepted an authenticated call with the connection's API key.",
  ),
  SecretUnreadable: entry(
    "Terminal",
    ["Ready"],
    CONN,
    "The connection's Secret cannot be read: it does not exist, lacks the key, or is outside the one namespace the operator reads Secrets in (chart value connections.secretNamespace).",
    "Fix the Secret or the reference; checked again when it changes.",
  ),
  ServiceUnreachable: entry(
    "UnderWay",
    ["Ready"],
    CONN,
    "The Ready check of the connection failed for a passing reason (network, 5xx, 429, timeout); the message has the error. Checked again every poll.",
  ),
  InUse: entry(
    "UnderWay",
    ["Ready"],
    CONN,
    "The connection is being deleted but objects still use it; the message counts them and names a few. It keeps its finalizer until they are gone (as Crossplane's ProviderConfigUsage).",
  ),
} as const satisfies Record<string, ReasonEntry>;
