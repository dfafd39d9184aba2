/** Resolves on the first SIGINT or SIGTERM. */
export function waitForSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolveSignal) => {
    const on = (sig: NodeJS.Signals) => {
      process.off("SIGINT", on);
      process.off("SIGTERM", on);
      resolveSignal(sig);
    };
    process.on("SIGINT", on);
    process.on("SIGTERM", on);
  });
}
