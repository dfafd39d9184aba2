/**
 * Several builds of the operator on one control plane, alternated: each `--build` is a
 * checkout with its bundle built (`npm run build` there, dist/bundle/main.js); each
 * round runs the operator phase of the bench (operator-phase.ts: N NasVolumes and N
 * TrainingJobs, the image's Node options) once per build, in the given order on even
 * rounds and reversed on odd ones, so that a loaded machine weighs on every build
 * alike. Prints one JSON document: per build, each run's RSS at readiness, peak RSS,
 * CPU milliseconds per object (start included), time until all Ready and time from all
 * Ready until no object is Reconciling (settle; the jobs' follow-up reads).
 *
 *   tsx test/bench/compare-builds.ts --build DIR [--build DIR]... [--n 200] [--rounds 2]
 *     [--idle-seconds 5] [--cpu-prof-dir DIR]   # V8 CPU profiles, DIR/<run>-<build>/
 *     [--operator-config FILE]                  # AIDC_CONFIG of every run
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { BUNDLE_ENTRY } from "../../scripts/bundle-dist.js";
import { startEnvironment } from "./environment.js";
import { runOperatorPhase } from "./operator-phase.js";
import { COMPARE_BUILDS_FLAGS } from "./script-flags.js";
import { ensureNamespace } from "./workload.js";

const { values } = parseArgs({
  options: COMPARE_BUILDS_FLAGS,
});
const builds = (values.build ?? []).map((dir) => resolve(dir));
if (builds.length === 0) throw new Error("give at least one --build DIR (a checkout, built)");
const n = Number(values.n);
const rounds = Number(values.rounds);
const idleMs = Number(values["idle-seconds"]) * 1000;
const progress = (line: string) => process.stderr.write(`[compare] ${line}\n`);
const round1 = (x: number) => Math.round(x * 10) / 10;

const env = await startEnvironment({ subscriptionDelayMs: 0 });
const logDir = await mkdtemp(join(tmpdir(), "aidc-compare-"));
const runs = new Map<string, Record<string, unknown>[]>(builds.map((b) => [b, []]));
try {
  let k = 0;
  for (let r = 0; r < rounds; r++) {
    for (const build of r % 2 === 0 ? builds : [...builds].reverse()) {
      k++;
      const namespace = `compare-${k}`;
      await ensureNamespace(env.kube, namespace);
      const res = await runOperatorPhase(env, {
        namespace,
        prefix: `c${k}`,
        n,
        jobsUseNas: false,
        concurrency: 16,
        createConcurrency: 10,
        idleMs,
        timeoutMs: 1_800_000,
        ...(values["operator-config"] ? { configFile: resolve(values["operator-config"]) } : {}),
        compiled: true,
        compiledMain: join(build, "dist", BUNDLE_ENTRY),
        ...(values["cpu-prof-dir"]
          ? { cpuProfDir: resolve(values["cpu-prof-dir"], `${k}-${basename(build)}`) }
          : {}),
        logFile: join(logDir, `${namespace}.log`),
        progress,
      });
      const p = res.process as {
        peakRssMiB?: number;
        cpuSeconds?: number;
        atReady?: { rssMiB: number } | null;
      };
      const settle = res.settle as { afterAllReadyMs?: number } | undefined;
      const run = {
        allReady: res.allReady,
        timeToAllReadyMs: res.timeToAllReadyMs,
        settleAfterAllReadyMs: settle?.afterAllReadyMs ?? null,
        rssAtReadyMiB: p.atReady?.rssMiB ?? null,
        peakRssMiB: p.peakRssMiB ?? null,
        cpuMsPerObject: p.cpuSeconds === undefined ? null : round1((p.cpuSeconds * 1000) / (2 * n)),
      };
      progress(`${basename(build)}: ${JSON.stringify(run)}`);
      runs.get(build)?.push(run);
    }
  }
  process.stdout.write(
    `${JSON.stringify({ n, rounds, idleMs, builds: Object.fromEntries(runs), logDir }, null, 2)}\n`,
  );
} finally {
  await env.stop();
}
