import type { Command } from "commander";
import { LocalControlPlane } from "../controlplane/controlplane.js";

/**
 * `aidc-operator controlplane`: starts a local etcd + kube-apiserver for a person,
 * prints the KUBECONFIG line, and stops cleanly on Ctrl-C or SIGTERM.
 */
export function registerControlPlaneCommand(program: Command): void {
  program
    .command("controlplane")
    .description("start a local kube-apiserver + etcd (RBAC on) and print its KUBECONFIG")
    .action(async () => {
      const plane = new LocalControlPlane();
      process.stderr.write("starting etcd and kube-apiserver (the first run builds them)...\n");
      await plane.start();
      process.stdout.write(
        `control plane ${await plane.version()} at ${plane.server}\n` +
          `export KUBECONFIG=${plane.kubeconfigPath}\n` +
          "Press Ctrl-C to stop.\n",
      );
      await waitForSignal();
      process.stderr.write("stopping...\n");
      await plane.stop();
    });
}

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
