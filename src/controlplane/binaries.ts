import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** Paths of the control-plane binaries. */
export interface ControlPlaneBinaries {
  dir: string;
  etcd: string;
  kubeApiserver: string;
  kubeControllerManager: string;
  kubectl: string;
  helm: string;
  /** Helm 4 (test/e2e/helm4.test.ts); built for the default Kubernetes wrapper only. */
  helm4: string;
}

/** The repository root (this file lives in src/controlplane or dist/controlplane). */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** Options of {@link controlPlaneBinaries}. */
export interface BinariesOptions {
  /**
   * Called with each progress line of the build script (`[controlplane] kube-apiserver:
   * building ...`): only a run that builds something prints more than the "cached" lines.
   */
  onProgress?: (line: string) => void;
  /**
   * The Kubernetes wrapper module of tools/controlplane the binaries come from: `kubernetes`
   * (the default, what the tests run against) or `kubernetes-floor` (the oldest version the
   * chart supports, never taken from `AIDC_CONTROLPLANE_BIN_DIR`).
   */
  kubernetes?: "kubernetes" | "kubernetes-floor";
  /** Stops a build under way (SIGTERM to the script), which then rejects. */
  signal?: AbortSignal;
}

/**
 * Returns the control-plane binaries, building them on first use with
 * tools/controlplane/build.sh (cached outside the repository, keyed by version).
 * `AIDC_CONTROLPLANE_BIN_DIR` names a ready directory holding all of them and skips the
 * script; `KUBEBUILDER_ASSETS` is honoured by the script itself.
 */
export async function controlPlaneBinaries(
  options: BinariesOptions = {},
): Promise<ControlPlaneBinaries> {
  const wrapper = options.kubernetes ?? "kubernetes";
  const given = wrapper === "kubernetes" ? process.env.AIDC_CONTROLPLANE_BIN_DIR : undefined;
  let dir = given;
  if (!dir) {
    const script = join(repoRoot, "tools", "controlplane", "build.sh");
    const stdout = await runBuildScript(script, wrapper, options);
    dir = stdout.trim().split("\n").pop() ?? "";
  }
  const bins: ControlPlaneBinaries = {
    dir,
    etcd: join(dir, "etcd"),
    kubeApiserver: join(dir, "kube-apiserver"),
    kubeControllerManager: join(dir, "kube-controller-manager"),
    kubectl: join(dir, "kubectl"),
    helm: join(dir, "helm"),
    helm4: join(dir, "helm4"),
  };
  for (const path of [bins.etcd, bins.kubeApiserver, bins.kubeControllerManager]) {
    if (!existsSync(path)) {
      throw new Error(
        `control-plane binary missing: ${path}` +
          (given
            ? " (AIDC_CONTROLPLANE_BIN_DIR must hold every binary tools/controlplane/build.sh builds)"
            : ""),
      );
    }
  }
  return bins;
}

/** Runs the build script for `wrapper`; resolves with its stdout, passing its stderr lines on. */
function runBuildScript(
  script: string,
  wrapper: string,
  { onProgress, signal }: BinariesOptions,
): Promise<string> {
  return new Promise((resolveRun, reject) => {
    const child = spawn("bash", [script, wrapper], { stdio: ["ignore", "pipe", "pipe"], signal });
    let stdout = "";
    let stderr = "";
    let partial = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
      partial += d;
      const lines = partial.split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) if (line) onProgress?.(line);
    });
    const timer = setTimeout(() => child.kill("SIGTERM"), 60 * 60 * 1000);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      if (code === 0) resolveRun(stdout);
      else reject(new Error(`${script} failed (exit ${code}): ${stderr.trim().slice(-2000)}`));
    });
  });
}
