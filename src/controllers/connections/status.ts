/**
 * The state of a ServiceConnection as pure decisions: its Ready condition from the
 * Secret check and the authenticated call, and the message of a deletion held while
 * objects use it.
 */
import { SERVICE_CONNECTION_REASONS } from "../../crds/serviceconnection.js";
import { errorMessage, errorReason, isTerminal } from "../../runtime/errors.js";
import type { ConditionInput } from "../../runtime/object-writes.js";
import type { KubeObject } from "../../runtime/resource.js";

const R = SERVICE_CONNECTION_REASONS.names;

/**
 * The reasons of a failed check that are the error's own (a service error's `reason`),
 * and what the Ready message says before the error's.
 */
const OWN_REASONS: Record<string, string> = {
  ApiKeyRefused: "the service refused the connection's API key",
  ProxyUnsupported: "no call is made to the service",
};

/** What the Ready check of a connection found. */
export type ConnectionCheck =
  | { outcome: "accepted"; baseUrl: string }
  | { outcome: "secretUnreadable" | "webIdentityUnavailable"; problem: string }
  | { outcome: "failed"; error: unknown };

/** The Ready condition of a connection after `check`. */
export function readyConditionOf(check: ConnectionCheck): ConditionInput {
  switch (check.outcome) {
    case "accepted":
      return {
        type: "Ready",
        status: "True",
        reason: R.Connected,
        message: `the service at ${check.baseUrl} accepted an authenticated call with the connection's API key`,
      };
    case "secretUnreadable":
      return { type: "Ready", status: "False", reason: R.SecretUnreadable, message: check.problem };
    case "webIdentityUnavailable":
      return {
        type: "Ready",
        status: "False",
        reason: R.WebIdentityUnavailable,
        message: check.problem,
      };
    case "failed": {
      const own = errorReason(check.error, "");
      const said = OWN_REASONS[own];
      if (said) {
        return {
          type: "Ready",
          status: "False",
          reason: own,
          message: `${said}: ${errorMessage(check.error)}`,
        };
      }
      // A refusal that is not the key's (a redirect, a wrong path) is no reason to touch
      // the Secret: it is said as such.
      return isTerminal(check.error)
        ? {
            type: "Ready",
            status: "False",
            reason: R.CheckRefused,
            message: `the service refused the authenticated check call, not for the key: ${errorMessage(check.error)}; checked again every poll`,
          }
        : {
            type: "Ready",
            status: "False",
            reason: R.ServiceUnreachable,
            message: `the authenticated check call failed: ${errorMessage(check.error)}`,
          };
    }
  }
}

/** How many users a held deletion names. */
const NAMED_USERS = 5;

/** The Ready condition of a connection whose deletion waits for `users` to be gone. */
export function inUseCondition(users: readonly KubeObject[]): ConditionInput {
  const named = users
    .slice(0, NAMED_USERS)
    .map((u) => `${u.kind} ${u.metadata?.namespace}/${u.metadata?.name}`);
  const more = users.length > NAMED_USERS ? ` and ${users.length - NAMED_USERS} more` : "";
  return {
    type: "Ready",
    status: "False",
    reason: R.InUse,
    message: `deletion waits: ${users.length} object(s) still use this connection (${named.join(", ")}${more}); delete them first (their remote resources live in this connection's account, and spec.connectionRef cannot change)`,
  };
}
