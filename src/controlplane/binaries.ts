import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);

/** Paths of the control-plane binaries. */
export interface ControlPlaneBinaries {
  dir: string;
  etcd: string;
  kubeApiserver: string;
  kubectl: string;
  helm: string;
}

/** The repository root (this file lives in src/controlplane or dist/controlplane). */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * Returns the control-plane binaries, building them on first use with
 * tools/controlplane/build.sh (cached outside the repository, keyed by version).
 * `AIDC_CONTROLPLANE_BIN_DIR` names a ready directory and skips the script;
 * `KUBEBUILDER_ASSETS` is honoured by the script itself.
 */
export async function controlPlaneBinaries(): Promise<ControlPlaneBinaries> {
  let dir = process.env.AIDC_CONTROLPLANE_BIN_DIR;
  if (!dir) {
    const script = join(repoRoot, "tools", "controlplane", "build.sh");
    const { stdout } = await run("bash", [script], {
      maxBuffer: 16 * 1024 * 1024,
      timeout: 60 * 60 * 1000,
    });
    dir = stdout.trim().split("\n").pop() ?? "";
  }
  const bins: ControlPlaneBinaries = {
    dir,
    etcd: join(dir, "etcd"),
    kubeApiserver: join(dir, "kube-apiserver"),
    kubectl: join(dir, "kubectl"),
    helm: join(dir, "helm"),
  };
  for (const path of [bins.etcd, bins.kubeApiserver]) {
    if (!existsSync(path)) throw new Error(`control-plane binary missing: ${path}`);
  }
  return bins;
}
