import { execFileSync, spawnSync } from "node:child_process";
import { join } from "node:path";
import { root } from "../../scripts/generated-files.js";

/**
 * Prometheus' own tools for the chart's alerts and dashboard, through tools/promtool (a
 * Go module built and cached by tools/promtool/build.sh, as the control plane is):
 * `promtool` checks and unit-tests rules; `promql-selectors` parses PromQL with
 * Prometheus' parser and says which series and labels an expression reads.
 */

let dir: string | undefined;

/** The directory of `promtool` and `promql-selectors`, built on first use (minutes the first time). */
export function promtoolDir(): string {
  dir ??= execFileSync("bash", [join(root, "tools/promtool/build.sh")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  }).trim();
  return dir;
}

/** What a promtool run printed, and its exit status. */
export interface PromtoolRun {
  status: number | null;
  output: string;
}

/** Runs `promtool args` in `cwd`. */
export function promtool(args: readonly string[], cwd: string): PromtoolRun {
  const run = spawnSync(join(promtoolDir(), "promtool"), [...args], { cwd, encoding: "utf8" });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** A series an expression reads: its metric and the labels the expression needs it to carry. */
export interface SeriesUse {
  metric: string;
  labels: string[];
}

/** The series each expression reads, by Prometheus' parser; throws on an expression it refuses. */
export function seriesUsedBy(exprs: readonly string[]): SeriesUse[][] {
  const run = spawnSync(join(promtoolDir(), "promql-selectors"), [], {
    input: JSON.stringify(exprs),
    encoding: "utf8",
  });
  if (run.status !== 0) throw new Error(`promql-selectors failed: ${run.stderr.trim()}`);
  const results = JSON.parse(run.stdout) as { selectors?: SeriesUse[]; error?: string }[];
  return results.map((r, i) => {
    if (r.error) throw new Error(`${exprs[i]}: ${r.error}`);
    return r.selectors ?? [];
  });
}
