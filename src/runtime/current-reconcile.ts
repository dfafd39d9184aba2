/**
 * The reconcile running now, carried through its async calls for the Kubernetes
 * client: its flow and its deadline. (The service client gets its reconcile's context
 * explicitly: a view per reconcile, src/service/call-context.ts.)
 *
 * The flow (its key's, workqueue.ts) lets the Kubernetes client share its write budget
 * between flows in turn without every write passing it along.
 *
 * The deadline bounds how long one reconcile may hold a worker. In Node a worker is an
 * async task, so a reconcile waiting on hung reads costs no thread, but it holds one of
 * the controller's N workers: a few such keys would starve every other object. Past the
 * deadline the reconcile is abandoned: the worker takes the next key, this key is
 * retried with backoff, and the abandoned run is stopped where it can be. Its signal,
 * the reconcile's `ctx.signal`, aborts the service calls the reconcile makes, and every
 * later request of the Kubernetes client made on its behalf is refused, so it cannot
 * write state computed before the deadline over what a newer reconcile saw.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { RetryableError } from "./errors.js";

const current = new AsyncLocalStorage<{ flow: string; signal: AbortSignal }>();

/** A reconcile ran past its deadline and was abandoned; its key is retried. */
export class ReconcileTimeoutError extends RetryableError {
  constructor(timeoutMs: number) {
    super(
      "ReconcileTimeout",
      `the reconcile took longer than ${timeoutMs} ms (reconcileTimeoutMs) and was abandoned; it is retried with backoff`,
    );
    this.name = "ReconcileTimeoutError";
  }
}

/** A request made for a reconcile that was already abandoned; nothing was sent. */
export class ReconcileAbandonedError extends RetryableError {
  constructor(what: string) {
    super("ReconcileAbandoned", `${what} was not sent: its reconcile was abandoned`);
    this.name = "ReconcileAbandonedError";
  }
}

/** Throws {@link ReconcileAbandonedError} when the current reconcile was abandoned. */
export function assertReconcileLive(what: string): void {
  if (current.getStore()?.signal.aborted) throw new ReconcileAbandonedError(what);
}

/** The flow of the reconcile this call belongs to; `""` outside a reconcile. */
export function currentReconcileFlow(): string {
  return current.getStore()?.flow ?? "";
}

/**
 * Runs `fn` as work of `flow` (undefined: `""`) with a signal that aborts when `parent`
 * does or `timeoutMs` passes (0: no bound). Resolves or rejects as `fn` does, or
 * rejects with {@link ReconcileTimeoutError} at the deadline without waiting for `fn`.
 */
export async function runReconcile<T>(
  timeoutMs: number,
  parent: AbortSignal,
  flow: string | undefined,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const abandon = new AbortController();
  const signal = AbortSignal.any([parent, abandon.signal]);
  const run = current.run({ flow: flow ?? "", signal }, () => fn(signal));
  if (timeoutMs <= 0) return run;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      abandon.abort();
      reject(new ReconcileTimeoutError(timeoutMs));
    }, timeoutMs);
  });
  // The abandoned run's own end (often a ReconcileAbandonedError) is of no interest.
  run.catch(() => undefined);
  try {
    return await Promise.race([run, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
