import { type ChildProcess, spawn } from "node:child_process";
import { controlPlaneBinaries } from "../../src/controlplane/binaries.js";

/** A running `kubectl proxy`. */
export interface KubectlProxy {
  /** `http://127.0.0.1:<port>`: plain HTTP/1.1, no credentials needed. */
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts `kubectl proxy` (the control plane's kubectl) on a free loopback port for the
 * API server of `kubeconfig`; resolves once it serves.
 */
export async function startKubectlProxy(kubeconfig: string): Promise<KubectlProxy> {
  const { kubectl } = await controlPlaneBinaries();
  const child: ChildProcess = spawn(
    kubectl,
    ["proxy", "--port=0", "--address=127.0.0.1", `--kubeconfig=${kubeconfig}`],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`kubectl proxy did not start within 30 s: ${output}`));
    }, 30_000);
    const read = (chunk: Buffer) => {
      output += chunk;
      const m = /Starting to serve on (127\.0\.0\.1:\d+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(`http://${m[1]}`);
      }
    };
    child.stdout?.on("data", read);
    child.stderr?.on("data", read);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`kubectl proxy exited with ${code}: ${output}`));
    });
  });
  return {
    url,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    },
  };
}
