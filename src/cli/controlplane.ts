import type { Command } from "commander";
import { startInterruptibly } from "./signals.js";

/**
 * A build-progress callback for `LocalControlPlane` that says the first run builds
 * (once, before the first "<binary>: building ..." line) and passes those lines on; a
 * run with every binary cached prints nothing.
 */
export function buildNotice(out: (line: string) => void): (line: string) => void {
  let building = false;
  return (line) => {
    if (!line.includes(": building ")) return;
    if (!building) out("building the control-plane binaries (first run only, ~5 min)...");
    building = true;
    out(line);
  };
}

/**
 * `aidc-operator controlplane`: starts a local etcd + kube-apiserver + kube-controller-manager for a person,
 * prints the KUBECONFIG line, and stops cleanly on Ctrl-C or SIGTERM.
 */
export function registerControlPlaneCommand(program: Command): void {
  program
    .command("controlplane")
    .description(
      "start a local kube-apiserver + etcd (RBAC on) + kube-controller-manager and print its KUBECONFIG",
    )
    .action(async () => {
      // Loaded only here: `run` never needs the local control plane.
      const { LocalControlPlane } = await import("../controlplane/controlplane.js");
      const err = (line: string) => process.stderr.write(`${line}\n`);
      err("starting the local control plane (etcd, kube-apiserver, kube-controller-manager)...");
      const up = await startInterruptibly(
        (signal) => new LocalControlPlane({ onBuildProgress: buildNotice(err), signal }).start(),
        (started) => started.stop(),
        err,
      );
      if (!up) return;
      const { started: plane, interrupted } = up;
      process.stdout.write(
        `control plane ${await plane.version()} at ${plane.server}\n` +
          `export KUBECONFIG=${plane.kubeconfigPath}\n` +
          "Press Ctrl-C to stop.\n",
      );
      await interrupted;
      process.stderr.write("stopping...\n");
      await plane.stop();
    });
}
