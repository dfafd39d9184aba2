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
