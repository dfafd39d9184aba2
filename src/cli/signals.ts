import { constants } from "node:os";

/** A repeat of the first signal this soon after it is the same stop, relayed. */
export const RELAYED_REPEAT_MS = 1_000;

/**
 * Resolves on the first SIGINT or SIGTERM. A repeat within {@link RELAYED_REPEAT_MS} is
 * that stop reaching the process again (a terminal's Ctrl-C goes to npm and the process,
 * and npm relays it to its child; tsx's CLI relays it too, when the process is slow to
 * acknowledge it) and is ignored, so the stop that follows finishes (`npm run dev`
 * removes the control plane's files); a later one exits at once, as a second signal does
 * with controller-runtime.
 */
export function waitForSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolveSignal) => {
    let firstAt: number | undefined;
    const on = (sig: NodeJS.Signals) => {
      if (firstAt === undefined) {
        firstAt = Date.now();
        resolveSignal(sig);
      } else if (Date.now() - firstAt >= RELAYED_REPEAT_MS) {
        process.exit(128 + constants.signals[sig]);
      }
    };
    process.on("SIGINT", on);
    process.on("SIGTERM", on);
  });
}

/** What {@link startInterruptibly} started, and the signal that will stop it. */
export interface Started<T> {
  started: T;
  interrupted: Promise<NodeJS.Signals>;
}

/**
 * Runs a command's start-up with {@link waitForSignal} already listening: the first
 * SIGINT or SIGTERM aborts the signal `start` receives, and `start` then stops what it
 * started, removes its files and rejects. Resolves with what started and the signal to
 * wait for; after an interrupted start-up, with nothing, once `out` has said so (the
 * command then ends with exit code 0, as after a stop once up). A start-up that finished
 * although interrupted is stopped with `stop`. A second signal forces the stop, as
 * waitForSignal says.
 */
export async function startInterruptibly<T>(
  start: (signal: AbortSignal) => Promise<T>,
  stop: (started: T) => Promise<void>,
  out: (line: string) => void,
): Promise<Started<T> | undefined> {
  const interrupted = waitForSignal();
  const abort = new AbortController();
  let starting = true;
  void interrupted.then(() => {
    if (starting) out("stopping what has started (Ctrl-C again to force)...");
    abort.abort();
  });
  let started: T;
  try {
    started = await start(abort.signal);
  } catch (err) {
    if (!abort.signal.aborted) throw err;
    out("stopped during start-up");
    return undefined;
  } finally {
    starting = false;
  }
  if (!abort.signal.aborted) return { started, interrupted };
  await stop(started);
  out("stopped during start-up");
  return undefined;
}
