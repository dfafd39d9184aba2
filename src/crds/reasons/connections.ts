/**
 * The reasons of service connections (reasons.ts has the whole table): which account an
 * object uses, on every kind that calls the service. A ServiceConnection's own state has
 * the reasons of src/crds/serviceconnection.ts.
 */
import { ALL, EVERY, entry, REFUSAL, type ReasonEntry } from "./entry.js";

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
    ["Synced"],
    ALL,
    "The ServiceConnection the object names does not exist (yet); no call is made to the service, and the object waits for it.",
  ),
  ProxyUnsupported: entry(
    "Terminal",
    REFUSAL,
    EVERY,
    "The proxy the operator's environment names for the connection's service or object storage (HTTPS_PROXY, HTTP_PROXY) is one it cannot use: a scheme other than http, https, socks5 and socks5h (socks4://, ftp://), or a URL that does not parse; the message names the variable and the scheme. No call is made.",
    "Set the operator's HTTPS_PROXY / HTTP_PROXY to a proxy it can use (chart: extraEnv), or name the host in NO_PROXY; the new environment takes effect when the operator restarts.",
  ),
  ConnectionThrottled: entry(
    "UnderWay",
    ["Synced"],
    ALL,
    "The client-side rate limit of the object's connection (spec.limits) is saturated: the call was not sent, and the object is requeued for when the limit has room again, so that one account's queue does not hold the workers every account shares. Raise the connection's limits if it lasts.",
  ),
} as const satisfies Record<string, ReasonEntry>;
