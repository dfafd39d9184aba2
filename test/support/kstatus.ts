import { execFileSync, spawnSync } from "node:child_process";
import { join } from "node:path";

/**
 * kstatus itself (fluxcd/cli-utils' `status.Compute`, the rules Flux, kpt and
 * cli-utils apply), through tools/kstatus: a small Go command built and cached by
 * tools/kstatus/build.sh, as the control plane is. Objects go in as JSON, verdicts
 * come out.
 */

/** kstatus' verdict of one object. */
export interface KstatusResult {
  status: "InProgress" | "Failed" | "Current" | "Terminating" | "NotFound" | "Unknown";
  message: string;
}

let binary: string | undefined;

/** The kstatus command, built on first use (minutes the first time, cached after). */
export function kstatusBinary(): string {
  binary ??= execFileSync("bash", [join(import.meta.dirname, "../../tools/kstatus/build.sh")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  }).trim();
  return binary;
}

/** kstatus' verdicts of `objects`, in order. */
export function kstatusOf(objects: readonly unknown[]): KstatusResult[] {
  const run = spawnSync(kstatusBinary(), [], { input: JSON.stringify(objects), encoding: "utf8" });
  if (run.status !== 0) throw new Error(`kstatus failed: ${run.stderr.trim()}`);
  return JSON.parse(run.stdout) as KstatusResult[];
}
