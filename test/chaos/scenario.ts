/**
 * The chaos scenario, shared by `npm run chaos` and its short integration test: while
 * NasVolumes, TrainingJobs, FileSystems (each with a mount) and BlockVolumes (each
 * attached to an instance) are being created, `aidc-operator run` (its own process)
 * is SIGKILLed again and again and restarted each time, the emulator fails a share of
 * requests with 500 (creates after taking effect) and delays others, and the API server
 * restarts once. Then the
 * operator runs undisturbed until every object is Ready (or a bound passes), resolving
 * objects stopped as CreateOutcomeUnknown as a user would, and the invariants are
 * checked (checks.ts).
 */
import { freePort } from "../../src/controlplane/controlplane.js";
import { applySeed } from "../../src/emulator/seeding.js";
import { seededRandom } from "../../src/emulator/state.js";
import type { BenchEnvironment } from "../bench/environment.js";
import { isReady } from "../bench/ready-tracker.js";
import {
  BV,
  blockVolume,
  FS,
  fileSystem,
  inParallel,
  JOB,
  NAS,
  nasVolume,
  trainingJob,
} from "../bench/workload.js";
import { type OperatorProcess, sleep, startOperatorProcess } from "../support/operator-process.js";
import { type ChaosFindings, checkInvariants } from "./checks.js";
import { resolveUnknownOutcomes, type UserResolutions } from "./user-resolution.js";

/** Options of {@link runChaos}. */
export interface ChaosOptions {
  namespace: string;
  /** Prefix of object and remote names (unique per run when the service is shared). */
  prefix: string;
  nas: number;
  jobs: number;
  /** FileSystems, each mounted on one instance (default 0). */
  fileSystems?: number;
  /** BlockVolumes, each attached to one instance (default 0). */
  blockVolumes?: number;
  /** Seed of the kill schedule, the batches and the emulator's fault draws. */
  seed: number;
  kills: number;
  /**
   * Fixed kill points instead of random times: the i-th kill happens as soon as the
   * emulator has answered this many create calls in total (a deterministic moment of
   * the crash-safe create protocol).
   */
  killAfterCreates?: number[];
  /** Random kills happen this long after the operator is ready: min..max ms. */
  killDelayMs: [number, number];
  /** Share of service requests other than creates answered with a 500 envelope (nothing happens). */
  errorRate: number;
  /**
   * Share of creates (NAS subscribe, task create) that take effect and then answer HTTP
   * 500 with the error envelope, as the real service did (issue 15); the first create
   * of each kind always does.
   */
  createErrorRate: number;
  /**
   * Share of NAS subscribes answered HTTP 500 without taking effect: looked up for the
   * list visibility window, then created again by the operator once two complete
   * listings lack them (service.recreateLostCreates). Default 0.
   */
  lostCreateRate?: number;
  /**
   * NasVolumes that import, with `managementPolicies: [Observe]`, a NAS made outside
   * the cluster: the run checks that nothing writing was sent for them. Default 0.
   */
  observed?: number;
  /**
   * The operator's list visibility window (`service.listVisibilityWindowMs`): how long it
   * looks up a create whose outcome is unknown before stopping as CreateOutcomeUnknown,
   * which the run then resolves as a user would (user-resolution.ts).
   */
  visibilityWindowMs: number;
  /** Share of service requests delayed, and by how much. */
  latency: { rate: number; ms: number };
  /** Restart the API server once, halfway through the kills (needs `env.plane`). */
  restartApiServer: boolean;
  /** After the last kill, how long the operator gets to make every object Ready. */
  settleTimeoutMs: number;
  pollIntervalMs: number;
  logFile: string;
  progress: (line: string) => void;
}

/** The figures of a chaos run and its findings. */
export interface ChaosReport extends ChaosFindings {
  seed: number;
  kills: number;
  apiServerRestarts: number;
  settledInMs: number | null;
  createCalls: number;
  serviceCalls: number;
  faultsInjected: number;
  /** Creates that took effect and then answered 500. */
  actingCreateFailures: number;
  /** Objects stopped as CreateOutcomeUnknown and resolved the documented way. */
  userResolutions: UserResolutions;
  /** Service calls by endpoint (list calls are the client-token lookups after a crash). */
  serviceCallsByEndpoint: Record<string, number>;
  /** Whole run, ms. */
  durationMs: number;
  /** Observe-only NasVolumes, and the writing calls that named their NAS (must be 0). */
  observed: number;
  observedWrites: number;
}

const CREATE_ENDPOINTS = new Set([
  "subscribeNas",
  "createTrainingTask",
  "createFileSystem",
  "createFileSystemMount",
  "createVolume",
]);

/** Runs the scenario against `env`; never throws for a broken invariant (see `violations`). */
export async function runChaos(env: BenchEnvironment, o: ChaosOptions): Promise<ChaosReport> {
  const random = seededRandom(o.seed);
  const began = Date.now();
  const seq0 = env.emulator.requestLog.lastSeq();
  const message = "chaos: injected failure";
  const actingCreateFailure = (endpoint: string, rate: number, times?: number) => ({
    kind: "error" as const,
    endpoint,
    rate,
    acting: true,
    httpStatus: 500,
    message,
    ...(times ? { times } : {}),
  });
  env.emulator.faults.set([
    ...[...CREATE_ENDPOINTS].flatMap((e) => [
      actingCreateFailure(e, 1, 1),
      actingCreateFailure(e, o.createErrorRate),
    ]),
    ...(o.lostCreateRate
      ? [
          {
            kind: "error" as const,
            endpoint: "subscribeNas",
            rate: o.lostCreateRate,
            httpStatus: 500,
            message,
          },
        ]
      : []),
    { kind: "error", rate: o.errorRate, message, exceptEndpoints: [...CREATE_ENDPOINTS] },
    { kind: "latency", rate: o.latency.rate, latencyMs: o.latency.ms },
  ]);
  const fsCount = o.fileSystems ?? 0;
  const observedCount = o.observed ?? 0;
  // NAS made outside the cluster (names without the run's prefix), each imported below.
  const observedIds = applySeed(env.emulator.state, {
    nas: Array.from({ length: observedCount }, (_, i) => ({ name: `observed-${i}` })),
  }).nas;
  const metricsPort = await freePort();
  const start = () =>
    startOperatorProcess({
      kubeconfig: env.kubeconfigPath,
      serviceBaseUrl: env.emulator.url,
      apiKey: env.apiKey,
      metricsPort,
      logFile: o.logFile,
      env: {
        AIDC_WATCH_NAMESPACES: o.namespace,
        AIDC_POLL_INTERVAL_MS: String(o.pollIntervalMs),
        AIDC_SERVICE_LIST_VISIBILITY_WINDOW_MS: String(o.visibilityWindowMs),
        AIDC_LOG_LEVEL: "debug",
        // The file systems mount on the emulator's CCI instances by id, which the
        // operator did not create: the namespace may adopt them (docs/install.md).
        // So do the observed NasVolumes, bound to NAS made outside the cluster.
        ...(fsCount > 0 || observedCount > 0 ? { AIDC_ADOPTION_NAMESPACES: o.namespace } : {}),
      },
    });
  const createCalls = () =>
    env.emulator.requestLog
      .read({ since: seq0 })
      .filter((e) => e.endpoint !== undefined && CREATE_ENDPOINTS.has(e.endpoint)).length;

  // Objects are created in batches before each kill of the first half, interleaved.
  const objects = [];
  const fileSystems = o.fileSystems ?? 0;
  const blockVolumes = o.blockVolumes ?? 0;
  for (let i = 0; i < Math.max(o.nas, o.jobs, fileSystems, blockVolumes); i++) {
    if (i < o.nas) objects.push({ res: NAS, obj: nasVolume(o.namespace, o.prefix, i) });
    if (i < o.jobs) objects.push({ res: JOB, obj: trainingJob(o.namespace, o.prefix, i, false) });
    if (i < fileSystems) objects.push({ res: FS, obj: fileSystem(o.namespace, o.prefix, i) });
    if (i < blockVolumes) objects.push({ res: BV, obj: blockVolume(o.namespace, o.prefix, i) });
  }
  observedIds.forEach((storageId, i) => {
    const obj = nasVolume(o.namespace, `${o.prefix}-observed`, i);
    obj.spec = {
      productCode: String((obj.spec as { productCode: string }).productCode),
      storageId,
      // Twice the seeded quota: under "*" this would be a scale; observed, it is drift.
      capacityGB: 200,
      managementPolicies: ["Observe"],
      deletionPolicy: "Delete",
    };
    objects.push({ res: NAS, obj });
  });
  const batches = Math.max(1, Math.ceil(o.kills / 2));
  const batchSize = Math.ceil(objects.length / batches);
  const restartAt = Math.floor(o.kills / 2);
  let apiServerRestarts = 0;
  let operator: OperatorProcess = start();
  try {
    for (let k = 0; k < o.kills; k++) {
      const batch = objects.slice(k * batchSize, (k + 1) * batchSize);
      await inParallel(batch, 5, async ({ res, obj }) => {
        await env.kube.create(res, obj);
      });
      await operator
        .waitReady(90_000)
        .catch((err: Error) => o.progress(`not ready: ${err.message}`));
      if (o.restartApiServer && k === restartAt && env.plane) {
        o.progress("restarting the API server");
        await env.plane.stopApiServer();
        await sleep(2000 + Math.floor(random() * 2000));
        await env.plane.startApiServer();
        apiServerRestarts += 1;
      }
      const point = o.killAfterCreates?.[k];
      if (point !== undefined) {
        const deadline = Date.now() + 30_000;
        while (createCalls() < point && Date.now() < deadline) await sleep(5);
      } else {
        const [min, max] = o.killDelayMs;
        await sleep(min + Math.floor(random() * (max - min)));
      }
      await operator.kill();
      o.progress(`kill ${k + 1}/${o.kills} (creates answered so far: ${createCalls()})`);
      operator = start();
    }
    await inParallel(objects.slice(o.kills * batchSize), 5, async ({ res, obj }) => {
      await env.kube.create(res, obj);
    });
    o.progress("kills done; waiting until every object is Ready");
    const settleStart = Date.now();
    let settledInMs: number | null = null;
    const userResolutions: UserResolutions = { adopted: [], createdAgain: [] };
    while (Date.now() - settleStart < o.settleTimeoutMs) {
      const all = [
        ...(await env.kube.list(NAS, o.namespace)).items,
        ...(await env.kube.list(JOB, o.namespace)).items,
        ...(await env.kube.list(FS, o.namespace)).items,
        ...(await env.kube.list(BV, o.namespace)).items,
      ];
      if (all.length === objects.length && all.every(isReady)) {
        settledInMs = Date.now() - settleStart;
        break;
      }
      for (const res of [NAS, JOB, FS, BV]) {
        await resolveUnknownOutcomes(env.kube, env.emulator, res, o.namespace, userResolutions);
      }
      await sleep(500);
    }
    // Faults off for the checks' own view; the operator stops before reading its log.
    env.emulator.faults.clear();
    await operator.stop();
    const log = env.emulator.requestLog.read({ since: seq0 });
    // Nothing that writes may name an observed NAS.
    const observedWrites = log.filter(
      (e) =>
        e.method !== "GET" &&
        observedIds.some((id) => e.path.includes(id) || JSON.stringify(e.body ?? "").includes(id)),
    ).length;
    const findings = await checkInvariants({
      kube: env.kube,
      emulator: env.emulator,
      namespace: o.namespace,
      prefix: o.prefix,
      nas: o.nas,
      jobs: o.jobs,
      fileSystems,
      blockVolumes,
      apiKey: env.apiKey,
      logFile: o.logFile,
    });
    return {
      seed: o.seed,
      kills: o.kills,
      apiServerRestarts,
      settledInMs,
      createCalls: createCalls(),
      serviceCalls: log.length,
      faultsInjected: log.filter((e) => e.fault === "error").length,
      actingCreateFailures: log.filter((e) => e.acted === true).length,
      userResolutions,
      serviceCallsByEndpoint: countBy(log.map((e) => e.endpoint ?? `${e.method} ${e.path}`)),
      durationMs: Date.now() - began,
      observed: observedCount,
      observedWrites,
      ...findings,
      violations: [
        ...findings.violations,
        ...(observedWrites > 0 ? [`${observedWrites} writing calls to observed NAS`] : []),
      ],
    };
  } finally {
    env.emulator.faults.clear();
    await operator.kill();
  }
}

function countBy(keys: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of keys) out[k] = (out[k] ?? 0) + 1;
  return out;
}
