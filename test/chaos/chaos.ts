/**
 * `npm run chaos -- [--n 100] [--kills 20] [--seed 1] ...`
 *
 * Starts a control plane and the emulator (20% of service requests fail with 500,
 * creates and deletes after taking effect, 10% of token-found creates without; a share is
 * delayed), creates N NasVolumes, N TrainingJobs, N FileSystems (each mounted on an
 * instance), N BlockVolumes (each attached to an instance), N TrainingTemplates, N/10
 * CciInstances (each saving two images) and N/10 observe-only NasVolumes of NAS made
 * outside the cluster (no writing call may name them), 20% of them on a second
 * account, while `aidc-operator run` is SIGKILLed at seeded random moments and
 * restarted each time (with `--replicas 2`, the leader is killed or loses its Lease, cut off or paused) and
 * 20% of the objects are deleted (a repeated delete refused with 409), restarts the API server once,
 * lets the operator settle, and prints the invariants as JSON. Exits 1 on any
 * violation. The same seed gives the same kill schedule, batches, deletes and fault
 * draws. `--emulator-mode listsOmitEnv,...` turns on the emulator's modes (behaviour.ts),
 * `--emulator-config '{...}'` sets its other switches, `--fault '{...}'` adds a fault rule
 * (faults.ts), `--steer-share 0.2` pauses a share of the objects until the last kill
 * (steering.ts), and `--webhook-share 0.2` puts a share under a mutating admission
 * webhook that strips the operator's records or stamps labels (admission.ts).
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { commaList } from "../../src/config/settings.js";
import { configPatchSchema } from "../../src/emulator/admin-api.js";
import { type EmulatorMode, emulatorModes } from "../../src/emulator/behaviour.js";
import { faultRuleSchema } from "../../src/emulator/faults.js";
import { startEnvironment } from "../bench/environment.js";
import { CHAOS_FLAGS } from "../bench/script-flags.js";
import { ensureNamespace } from "../bench/workload.js";
import { runChaos } from "./scenario.js";

const { values: flags } = parseArgs({
  options: CHAOS_FLAGS,
});
const env = process.env;
const num = (flag: string | undefined, envName: string, dflt: number): number => {
  const raw = flag ?? env[envName];
  const v = raw === undefined || raw === "" ? dflt : Number(raw);
  if (!Number.isFinite(v) || v < 0) throw new Error(`bad number for ${envName}: ${raw}`);
  return v;
};
const n = num(flags.n, "AIDC_CHAOS_N", 100);
const options = {
  nas: num(flags.nas, "AIDC_CHAOS_NAS", n),
  jobs: num(flags.jobs, "AIDC_CHAOS_JOBS", n),
  fileSystems: num(flags.fs, "AIDC_CHAOS_FS", n),
  blockVolumes: num(flags.bv, "AIDC_CHAOS_BV", n),
  templates: num(flags.templates, "AIDC_CHAOS_TEMPLATES", n),
  cciInstances: num(flags.cci, "AIDC_CHAOS_CCI", Math.ceil(n / 10)),
  kills: Math.max(1, num(flags.kills, "AIDC_CHAOS_KILLS", 20)),
  seed: num(flags.seed, "AIDC_CHAOS_SEED", 1),
  errorRate: num(flags["error-rate"], "AIDC_CHAOS_ERROR_RATE", 0.2),
  createErrorRate: num(flags["create-error-rate"], "AIDC_CHAOS_CREATE_ERROR_RATE", 0.2),
  lostCreateRate: num(flags["lost-create-rate"], "AIDC_CHAOS_LOST_CREATE_RATE", 0.1),
  observed: num(flags.observed, "AIDC_CHAOS_OBSERVED", Math.ceil(n / 10)),
  deleteShare: num(flags["delete-share"], "AIDC_CHAOS_DELETE_SHARE", 0.2),
  secondAccountShare: num(flags["second-account-share"], "AIDC_CHAOS_SECOND_ACCOUNT_SHARE", 0.2),
  visibilityWindowMs: num(flags["visibility-window-ms"], "AIDC_CHAOS_VISIBILITY_WINDOW_MS", 30_000),
  latency: {
    rate: num(flags["latency-rate"], "AIDC_CHAOS_LATENCY_RATE", 0.3),
    ms: num(flags["latency-ms"], "AIDC_CHAOS_LATENCY_MS", 300),
  },
  killDelayMs: [
    num(flags["kill-min-ms"], "AIDC_CHAOS_KILL_MIN_MS", 300),
    num(flags["kill-max-ms"], "AIDC_CHAOS_KILL_MAX_MS", 5000),
  ] as [number, number],
  settleTimeoutMs: num(flags["settle-seconds"], "AIDC_CHAOS_SETTLE_SECONDS", 600) * 1000,
  pollIntervalMs: num(flags["poll-interval-ms"], "AIDC_CHAOS_POLL_INTERVAL_MS", 2000),
  restartApiServer: !(flags["no-apiserver-restart"] ?? false),
  repeatDeleteStatus: num(flags["repeat-delete-status"], "AIDC_CHAOS_REPEAT_DELETE_STATUS", 409),
  replicas: Math.max(1, num(flags.replicas, "AIDC_CHAOS_REPLICAS", 1)),
  pauseLeader: flags["pause-leader"] ?? false,
  // Checked here, before a control plane starts: an unknown name is an error naming it.
  emulatorModes: Object.keys(
    emulatorModes(commaList(flags["emulator-mode"] ?? env.AIDC_CHAOS_EMULATOR_MODE ?? "")),
  ) as EmulatorMode[],
  // The behaviour's other switches (admin PATCH config's fields) and fault rules of the
  // run's own (faults.ts), as JSON; checked here too.
  emulatorConfig: configPatchSchema
    .omit({ apiKey: true })
    .parse(JSON.parse(flags["emulator-config"] ?? env.AIDC_CHAOS_EMULATOR_CONFIG ?? "{}")),
  faults: (flags.fault ?? []).map((f) => faultRuleSchema.parse(JSON.parse(f))),
  steerShare: num(flags["steer-share"], "AIDC_CHAOS_STEER_SHARE", 0),
  webhookShare: num(flags["webhook-share"], "AIDC_CHAOS_WEBHOOK_SHARE", 0),
};
const subscriptionDelayMs = num(
  flags["subscription-delay-ms"],
  "AIDC_CHAOS_SUBSCRIPTION_DELAY_MS",
  500,
);
const progress = (line: string) => process.stderr.write(`[chaos] ${line}\n`);

async function main(): Promise<number> {
  const modes = options.emulatorModes.length ? `, emulator modes ${options.emulatorModes}` : "";
  progress(
    `seed ${options.seed}: ${options.nas} NasVolumes, ${options.jobs} TrainingJobs, ${options.fileSystems} FileSystems, ${options.blockVolumes} BlockVolumes, ${options.templates} TrainingTemplates, ${options.cciInstances} CciInstances, ${options.kills} kills${modes}`,
  );
  const chaos = await startEnvironment({ subscriptionDelayMs, randomSeed: options.seed });
  const logDir = await mkdtemp(join(tmpdir(), "aidc-chaos-"));
  try {
    await ensureNamespace(chaos.kube, "chaos");
    const report = await runChaos(chaos, {
      ...options,
      namespace: "chaos",
      prefix: "chaos",
      logFile: join(logDir, "operator.log"),
      progress,
    });
    // What the service received (arrival time, duration, body, answer, injected fault),
    // one JSON line per request, beside the operator's logs: to tell whose call was whose.
    const requests = join(logDir, "service-requests.jsonl");
    const lines = chaos.emulator.requestLog.read().map((e) => JSON.stringify(e));
    await writeFile(requests, `${lines.join("\n")}\n`);
    // Remote counts of 1 are the norm: print only the exceptions.
    const exceptions = (r: Record<string, number>) =>
      Object.fromEntries(Object.entries(r).filter(([, v]) => v !== 1));
    const remoteOk = [
      ...Object.values(report.remoteCounts.nas),
      ...Object.values(report.remoteCounts.tasks),
      ...Object.values(report.remoteCounts.fileSystems),
      ...Object.values(report.remoteCounts.volumes),
      ...Object.values(report.remoteCounts.templates),
    ].filter((v) => v === 1).length;
    const attachedOk = Object.values(report.remoteCounts.attached).filter((v) => v === 1).length;
    const mountsOk = Object.values(report.remoteCounts.mounts).filter((v) => v === 1).length;
    process.stdout.write(
      `${JSON.stringify(
        {
          ...report,
          emulatorModes: options.emulatorModes,
          // The plan's entries are in the findings that name them.
          deletes: { ...report.deletes, planned: report.deletes.planned.length },
          onSecondAccount: report.onSecondAccount.length,
          remoteCounts: {
            exactlyOne: remoteOk,
            of: report.total,
            nasNotOne: exceptions(report.remoteCounts.nas),
            tasksNotOne: exceptions(report.remoteCounts.tasks),
            fileSystemsNotOne: exceptions(report.remoteCounts.fileSystems),
            fileSystemsWithExactlyOneMount: mountsOk,
            mountsNotOne: exceptions(report.remoteCounts.mounts),
            volumesNotOne: exceptions(report.remoteCounts.volumes),
            templatesNotOne: exceptions(report.remoteCounts.templates),
            blockVolumesAttachedToTheirInstance: attachedOk,
            attachedNotOne: exceptions(report.remoteCounts.attached),
          },
          notReady: report.notReady.slice(0, 50),
          operatorLog: join(logDir, "operator.log"),
          serviceRequests: requests,
          ok: report.violations.length === 0,
        },
        null,
        2,
      )}\n`,
    );
    return report.violations.length === 0 ? 0 : 1;
  } finally {
    await chaos.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`[chaos] failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
