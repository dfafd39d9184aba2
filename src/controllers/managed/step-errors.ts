/**
 * The errors of a managed reconcile's remote steps: each failure is wrapped as
 * `what: cause`, keeping the cause's reason and whether it is terminal.
 */
import {
  errorMessage,
  errorReason,
  isTerminal,
  RetryableError,
  requeueAfterOf,
  TerminalError,
} from "../../runtime/errors.js";

/** Messages that wrap the cause of a failed step (constants around the cause). */
export const ERR = {
  operations: "will not order the remote resource",
  preflight: "cannot check the spec against the service before ordering",
  create: "cannot create the remote resource",
  poll: "cannot read the outcome of the subscription",
  lookup: "cannot look up the remote resource of an unfinished create",
  observe: "cannot observe the remote resource",
  update: "cannot update the remote resource",
  beforeDelete: "cannot prepare the remote resource for deletion",
  delete: "cannot delete the remote resource",
} as const;

/**
 * Re-throws `err` as a RetryableError or TerminalError (by `isTerminal`) whose message
 * is `what: cause` and whose reason is the cause's own PascalCase reason, if any.
 */
export function wrapError(what: string, err: unknown): Error {
  const terminal = isTerminal(err);
  const reason = errorReason(err, terminal ? "ReconcileTerminal" : "ReconcileError");
  const message = `${what}: ${errorMessage(err)}`;
  return terminal
    ? new TerminalError(reason, message, { cause: err })
    : new RetryableError(reason, message, {
        cause: err,
        waiting: err instanceof RetryableError && err.waiting,
        ...(requeueAfterOf(err) !== undefined ? { requeueAfterMs: requeueAfterOf(err) } : {}),
      });
}

/** Runs one remote step, wrapping its failure as `what: cause` (see {@link wrapError}). */
export async function step<V>(what: string, fn: () => Promise<V>): Promise<V> {
  try {
    return await fn();
  } catch (err) {
    throw wrapError(what, err);
  }
}
