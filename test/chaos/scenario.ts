/**
 * The chaos scenario, shared by `npm run chaos` and its short integration test: while
 * NasVolumes, TrainingJobs, FileSystems (each with a mount), BlockVolumes (each
 * attached to an instance), TrainingTemplates and CciInstances (each saving images,
 * cci.ts) are being created, `aidc-operator run` (its own process) is SIGKILLed again
 * and again and restarted each time, the emulator fails a share of requests with 500
 * (creates and deletes after taking effect) and delays others, and the API server
 * restarts once; a seeded share of the objects is deleted meanwhile (deletes.ts), and another share
 * lives in a second account (accounts.ts). Then the operator runs undisturbed until
 * every object left is Ready and every deleted one gone (or a bound passes), resolving
 * objects stopped as CreateOutcomeUnknown as a user would, and the invariants are
 * checked (checks.ts, deletes.ts, cci.ts).
 */
import { writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { freePort } from "../../src/controlplane/controlplane.js";
import {
  type EmulatorBehaviour,
  type EmulatorMode,
  emulatorModes,
} from "../../src/emulator/behaviour.js";
import type { FaultRuleInput } from "../../src/emulator/faults.js";
import { applySeed } from "../../src/emulator/seeding.js";
import { seededRandom } from "../../src/emulator/state.js";
import type { KubeObject } from "../../src/runtime/resource.js";
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
  TPL,
  trainingJob,
  trainingTemplate,
} from "../bench/workload.js";
import { type OperatorProcess, sleep, startOperatorProcess } from "../support/operator-process.js";
import { removeConnections } from "../support/two-teams.js";
import { type SecondAccount, secondAccount } from "./accounts.js";
import {
  type AdmissionFindings,
  checkAdmission,
  heldOf,
  mayWaitOf,
  planAdmission,
  startChaosWebhook,
  syncedReason,
  type WebhookMode,
  waitingOf,
} from "./admission.js";
import { CCI, cciObjects, cciSettled, checkImages, type ImageFindings } from "./cci.js";
import { type ChaosFindings, checkInvariants, checkOneActor } from "./checks.js";
import {
  type ChaosObject,
  checkDeletes,
  DELETE_ENDPOINTS,
  type DeleteFindings,
  deletePlanned,
  planDeletes,
  RemoteCensus,
} from "./deletes.js";
import { Replicas, replicaConfig } from "./replicas.js";
import {
  checkSteering,
  echoes,
  pausePlanned,
  planSteering,
  resumePlanned,
  type SteeringFindings,
} from "./steering.js";
import {
  CREATE_ENDPOINTS,
  repeatedCreate,
  resolveUnknownOutcomes,
  type UserResolutions,
} from "./user-resolution.js";

/** The creates the operator finds again by client token (a template: by name) after a lost answer. */
const LOOKED_UP_CREATES = [
  "subscribeNas",
  "createTrainingTask",
  "createFileSystem",
  "createVolume",
  "createTemplate",
];

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
  /** TrainingTemplates (default 0): found again by their name after a lost answer. */
  templates?: number;
  /** CciInstances (default 0), each saving two images from an instance seeded for it. */
  cciInstances?: number;
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
   * Share of creates (NAS subscribe, task create, ...) and deletes that take effect and
   * then answer HTTP 500 with the error envelope, as the real service did (issue 15);
   * the first call of each kind always does.
   */
  createErrorRate: number;
  /**
   * Share of the creates the operator finds again by token or name (NAS subscribe, task,
   * file system, volume and template create) answered HTTP 500 without taking effect:
   * looked up for the list visibility window, then created again by the operator once
   * two complete listings lack them (service.recreateLostCreates). Default 0.
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
  /**
   * Share of the objects deleted while the kills go on (default 0), half with
   * deletionPolicy Delete and half Orphan by a seeded draw (deletes.ts).
   */
  deleteShare?: number;
  /**
   * Share of the NasVolumes, TrainingJobs and TrainingTemplates on a second account's
   * ServiceConnection (default 0, no second account; accounts.ts).
   */
  secondAccountShare?: number;
  /** Share of service requests delayed, and by how much. */
  latency: { rate: number; ms: number };
  /**
   * The emulator's answer to a delete of a resource already being deleted (0, the
   * default: accepted; 409 or 400: refused as "already being released"); with it, a
   * deleted NAS stays Releasing for 2 s so that a repeated delete meets the refusal.
   */
  repeatDeleteStatus?: number;
  /**
   * Operator processes (default 1). With 2, they elect a leader on a Lease in the run's
   * namespace (replicas.ts) and each kill hands over: the odd ones SIGKILL the leader,
   * the even ones cut its API server (a Lease loss); no service call of one leader may
   * come after the next one's first (checkOneActor).
   */
  replicas?: number;
  /**
   * Share of the objects paused while the kills go on (default 0), half from their
   * creation, and resumed with a reconcile request after the last kill (steering.ts).
   */
  steerShare?: number;
  /**
   * Share of the objects that create whose writes a mutating webhook of the run changes
   * (default 0, no webhook; admission.ts): some held at WriteNotKept, others stamped.
   */
  webhookShare?: number;
  /** The webhook modes drawn from (default all of admission.ts's). */
  webhookModes?: readonly WebhookMode[];
  /** The emulator's other behaviour switches for the run (admin-api.ts's config patch). */
  emulatorConfig?: Partial<EmulatorBehaviour>;
  /** Fault rules of the run's own, ahead of its injected failures (faults.ts). */
  faults?: FaultRuleInput[];
  /** With replicas: every second Lease loss pauses the leader (SIGSTOP) past the lease instead. */
  pauseLeader?: boolean;
  /**
   * The emulator's modes turned on for the run, in every account (behaviour.ts: e.g.
   * `listsOmitEnv`, a task and template list without env). Default none.
   */
  emulatorModes?: EmulatorMode[];
  /** Restart the API server once, halfway through the kills (needs `env.plane`). */
  restartApiServer: boolean;
  /**
   * The operator's `reconcileTimeoutMs` (default its own, 60 s): a create a killed
   * process left is looked up until this plus `service.timeoutMs` after its marker, then
   * for the visibility window.
   */
  reconcileTimeoutMs?: number;
  /**
   * The operator's `holdBackoff` (default its own, from 15 s): how soon an object held
   * by a terminal error such as WriteNotKept is tried again.
   */
  holdBackoff?: { baseMs: number; maxMs: number };
  /**
   * How long into the settle an object the webhook left waiting at WriteNotKept
   * (`strip-some`) is still given to bind before it counts as settled (default 30 s: the
   * operator's first two hold retries).
   */
  waitingGraceMs?: number;
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
  /** Creates and deletes that took effect and then answered 500. */
  actingCreateFailures: number;
  /** Deletes the service refused with `repeatDeleteStatus` (a resource already being deleted). */
  refusedDeletes: number;
  /** Objects stopped as CreateOutcomeUnknown and resolved the documented way. */
  userResolutions: UserResolutions;
  /** Service calls by endpoint (list calls are the client-token lookups after a crash). */
  serviceCallsByEndpoint: Record<string, number>;
  /** Whole run, ms. */
  durationMs: number;
  /** Observe-only NasVolumes, and the writing calls that named their NAS (must be 0). */
  observed: number;
  observedWrites: number;
  /** The objects deleted during the run and what became of their resources. */
  deletes: Omit<DeleteFindings, "violations">;
  /** Objects on the second account's connection, `Kind/name`. */
  onSecondAccount: string[];
  /** The objects paused and resumed during the run. */
  steering: Omit<SteeringFindings, "violations">;
  /** The images the CciInstances saved. */
  images: Omit<ImageFindings, "violations">;
  /** The objects under the run's mutating webhook, and what it did (admission.ts). */
  admission?: Omit<AdmissionFindings, "violations"> & { webhook: Record<string, number> };
  /** With replicas: the handovers, and the service calls of each operator process. */
  handovers?: Replicas["handovers"] & { callsByProcess: Record<string, number> };
}

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
  const acting = [...CREATE_ENDPOINTS, ...DELETE_ENDPOINTS];
  const lostRate = o.lostCreateRate ?? 0;
  env.emulator.faults.set([
    ...(o.faults ?? []),
    ...acting.flatMap((e) => [
      actingCreateFailure(e, 1, 1),
      actingCreateFailure(e, o.createErrorRate),
    ]),
    ...LOOKED_UP_CREATES.filter(() => lostRate > 0).map((endpoint) => ({
      kind: "error" as const,
      endpoint,
      rate: lostRate,
      httpStatus: 500,
      message,
    })),
    { kind: "error", rate: o.errorRate, message, exceptEndpoints: acting },
    { kind: "latency", rate: o.latency.rate, latencyMs: o.latency.ms },
  ]);
  const behaviour = env.emulator.state.behaviour;
  // Before the second account is made: it copies this behaviour.
  env.emulator.state.behaviour = {
    ...behaviour,
    ...o.emulatorConfig,
    ...emulatorModes(o.emulatorModes ?? []),
    ...(o.repeatDeleteStatus
      ? {
          repeatDeleteStatus: o.repeatDeleteStatus,
          nasReleaseDelayMs: Math.max(behaviour.nasReleaseDelayMs, 2000),
          taskReleaseDelayMs: Math.max(behaviour.taskReleaseDelayMs, 2000),
        }
      : {}),
  };
  const fsCount = o.fileSystems ?? 0;
  const observedCount = o.observed ?? 0;
  // NAS made outside the cluster (names without the run's prefix), each imported below.
  const observedIds = applySeed(env.emulator.state, {
    nas: Array.from({ length: observedCount }, (_, i) => ({ name: `observed-${i}` })),
  }).nas;
  const metricsPort = await freePort();
  // Every delete the run may ask for goes to the service (tasks' and NAS' are off by default).
  const configFile = join(dirname(o.logFile), "config.json");
  await writeFile(
    configFile,
    JSON.stringify({
      // The second account's key is in a Secret of the run's namespace.
      connections: { secretNamespace: o.namespace },
      ...((o.replicas ?? 1) > 1 ? replicaConfig(o.namespace, `${o.prefix}-leader`) : {}),
      ...(o.reconcileTimeoutMs ? { reconcileTimeoutMs: o.reconcileTimeoutMs } : {}),
      ...(o.holdBackoff ? { holdBackoff: o.holdBackoff } : {}),
      service: {
        endpoints: {
          deleteNas: "DELETE /v1/nasStorage/instance/{id}",
          deleteTrainingTask: "DELETE /v1/training/instance/{id}",
          deleteTemplate: "DELETE /v1/training/template/{id}",
        },
      },
    }),
  );
  const start = (
    p = { kubeconfig: env.kubeconfigPath, serviceBaseUrl: env.emulator.url, metricsPort },
    podName?: string,
  ) =>
    startOperatorProcess({
      ...p,
      apiKey: env.apiKey,
      logFile: o.logFile,
      env: {
        ...(podName ? { POD_NAME: podName } : {}),
        AIDC_WATCH_NAMESPACES: o.namespace,
        AIDC_POLL_INTERVAL_MS: String(o.pollIntervalMs),
        AIDC_SERVICE_LIST_VISIBILITY_WINDOW_MS: String(o.visibilityWindowMs),
        AIDC_LOG_LEVEL: "debug",
        AIDC_CONFIG: configFile,
        // The file systems mount on the emulator's CCI instances by id, which the
        // operator did not create: the namespace may adopt them (docs/install.md).
        // So do the observed NasVolumes, bound to NAS made outside the cluster.
        // And the CciInstances, each observing an instance made outside the cluster.
        ...(fsCount > 0 || observedCount > 0 || (o.cciInstances ?? 0) > 0
          ? { AIDC_ADOPTION_NAMESPACES: o.namespace }
          : {}),
      },
    });
  const listAll = async () => {
    const lists = await Promise.all(
      [NAS, JOB, FS, BV, TPL, CCI].map((res) => env.kube.list(res, o.namespace)),
    );
    return lists.flatMap((l) => l.items);
  };
  const createCalls = () =>
    env.emulator.requestLog
      .read({ since: seq0 })
      .filter((e) => e.endpoint !== undefined && CREATE_ENDPOINTS.has(e.endpoint)).length;

  // Objects are created in batches before each kill of the first half, interleaved.
  const objects: ChaosObject[] = [];
  const fileSystems = o.fileSystems ?? 0;
  const blockVolumes = o.blockVolumes ?? 0;
  const templates = o.templates ?? 0;
  const cci = cciObjects(env.emulator, o.namespace, o.prefix, o.cciInstances ?? 0);
  const most = Math.max(o.nas, o.jobs, fileSystems, blockVolumes, templates, cci.length);
  for (let i = 0; i < most; i++) {
    if (i < o.nas) objects.push({ res: NAS, obj: nasVolume(o.namespace, o.prefix, i) });
    if (i < o.jobs) objects.push({ res: JOB, obj: trainingJob(o.namespace, o.prefix, i, false) });
    if (i < fileSystems) objects.push({ res: FS, obj: fileSystem(o.namespace, o.prefix, i) });
    if (i < blockVolumes) objects.push({ res: BV, obj: blockVolume(o.namespace, o.prefix, i) });
    if (i < templates) objects.push({ res: TPL, obj: trainingTemplate(o.namespace, o.prefix, i) });
    const instance = cci[i];
    if (instance) objects.push(instance);
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
    objects.push({ res: NAS, obj, remoteName: `observed-${i}` });
  });
  const second: SecondAccount | undefined = o.secondAccountShare
    ? await secondAccount(
        env.kube,
        env.emulator,
        o.namespace,
        objects,
        o.secondAccountShare,
        o.seed,
      )
    : undefined;
  const plan = planDeletes(objects, o.deleteShare ?? 0, o.seed);
  const steer = planSteering(objects, o.steerShare ?? 0, o.seed);
  const steered = new Set([...steer.values()].map((s) => `${s.kind}/${s.name}`));
  const admission = planAdmission(objects, o.webhookShare ?? 0, o.seed, steered, o.webhookModes);
  const held = heldOf(admission);
  // Objects whose records the webhook strips from some writes: Ready, or waiting.
  const mayWait = mayWaitOf(admission);
  const webhook =
    admission.size > 0
      ? await startChaosWebhook(
          env.kube,
          o.namespace,
          o.seed,
          { res: NAS, spec: nasVolume(o.namespace, o.prefix, 0).spec as Record<string, unknown> },
          [NAS, JOB, FS, BV, TPL, CCI].map((r) => r.plural),
        )
      : undefined;
  const requestedAt = `chaos-${o.seed}-resumed`;
  const census = new RemoteCensus(env.emulator).start();
  const batches = Math.max(1, Math.ceil(o.kills / 2));
  const batchSize = Math.ceil(objects.length / batches);
  const restartAt = Math.floor(o.kills / 2);
  let apiServerRestarts = 0;
  let deletedUpTo = 0;
  const replicas =
    (o.replicas ?? 1) > 1
      ? new Replicas(
          env,
          { namespace: o.namespace, name: `${o.prefix}-leader` },
          (p) => start(p, p.podName),
          dirname(o.logFile),
        )
      : undefined;
  let operator: OperatorProcess | Replicas = replicas ?? start();
  try {
    await replicas?.start(o.replicas ?? 1);
    for (let k = 0; k < o.kills; k++) {
      const batch = objects.slice(k * batchSize, (k + 1) * batchSize);
      await inParallel(batch, 5, async ({ res, obj }) => {
        await env.kube.create(res, obj);
      });
      // The previous batch's share of deletes, its creates under way or done.
      if (k > 0 && deletedUpTo < Math.min(k * batchSize, objects.length)) {
        await deletePlanned(env.kube, objects, plan, (k - 1) * batchSize, k * batchSize);
        await pausePlanned(env.kube, objects, steer, (k - 1) * batchSize, k * batchSize);
        deletedUpTo = k * batchSize;
      }
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
      let how = "";
      if (replicas) how = `, ${await replicas.handOver(k % 2 === 1, o.pauseLeader && k % 4 === 3)}`;
      else {
        await operator.kill();
        operator = start();
      }
      o.progress(`kill ${k + 1}/${o.kills}${how} (creates answered so far: ${createCalls()})`);
    }
    await inParallel(objects.slice(o.kills * batchSize), 5, async ({ res, obj }) => {
      await env.kube.create(res, obj);
    });
    await deletePlanned(env.kube, objects, plan, deletedUpTo, objects.length);
    await pausePlanned(env.kube, objects, steer, deletedUpTo, objects.length);
    const resumedAt = await resumePlanned(env.kube, objects, steer, requestedAt);
    o.progress("kills done; waiting until every object is Ready");
    const settleStart = Date.now();
    const deleted = new Set([...plan.values()].map((d) => `${d.kind}/${d.name}`));
    let settledInMs: number | null = null;
    const userResolutions: UserResolutions = { adopted: [], createdAgain: [] };
    const grace = o.waitingGraceMs ?? 30_000;
    const waits = (x: KubeObject) =>
      Date.now() - settleStart >= grace &&
      mayWait.has(`${x.kind}/${x.metadata?.name}`) &&
      syncedReason(x) === "WriteNotKept";
    while (Date.now() - settleStart < o.settleTimeoutMs) {
      const all = await listAll();
      // After the grace, an object left waiting at WriteNotKept counts as settled (deleted
      // or not).
      const left = all.filter((x) => deleted.has(`${x.kind}/${x.metadata?.name}`));
      const gone = left.every(waits);
      const done = (x: KubeObject) =>
        held.has(`${x.kind}/${x.metadata?.name}`)
          ? syncedReason(x) === "WriteNotKept"
          : waits(x) ||
            ((x.kind === CCI.kind ? cciSettled(x) : isReady(x)) && echoes(x, steered, requestedAt));
      if (gone && all.length - left.length === objects.length - plan.size && all.every(done)) {
        settledInMs = Date.now() - settleStart;
        break;
      }
      for (const res of [NAS, JOB, FS, BV, TPL]) {
        await resolveUnknownOutcomes(env.kube, env.emulator, res, o.namespace, userResolutions);
      }
      await sleep(500);
    }
    // Faults off for the checks' own view; the operator stops before reading its log.
    env.emulator.faults.clear();
    await operator.stop();
    census.stop();
    const log = env.emulator.requestLog.read({ since: seq0 });
    // Nothing that writes may name an observed NAS.
    const observedWrites = log.filter(
      (e) =>
        e.method !== "GET" &&
        observedIds.some((id) => e.path.includes(id) || JSON.stringify(e.body ?? "").includes(id)),
    ).length;
    const settled = await listAll();
    const waiting = waitingOf(admission, settled, deleted);
    const findings = await checkInvariants({
      kube: env.kube,
      emulator: env.emulator,
      namespace: o.namespace,
      prefix: o.prefix,
      nas: o.nas,
      jobs: o.jobs,
      fileSystems,
      blockVolumes,
      templates,
      apiKey: env.apiKey,
      logFile: o.logFile,
      deleted,
      held,
      waiting,
      ...(second ? { second } : {}),
    });
    const { violations: admissionViolations, ...admitted } = checkAdmission(
      admission,
      log,
      settled,
      deleted,
      webhook?.markers ?? new Map(),
    );
    const { violations: imageViolations, ...images } = await checkImages({
      kube: env.kube,
      emulator: env.emulator,
      namespace: o.namespace,
      prefix: o.prefix,
      count: cci.length,
      deleted,
    });
    // Each create the operator repeated by itself, with what the service received of it.
    const repeats = findings.createsRepeated.map((key) => repeatedCreate(env.emulator, key));
    const { violations: steeringViolations, ...steering } = checkSteering(
      steer,
      log,
      resumedAt,
      await listAll(),
      requestedAt,
    );
    const oneActor = replicas ? checkOneActor(replicas.calls, replicas.terms) : [];
    const { violations: deleteViolations, ...deletes } = await checkDeletes({
      kube: env.kube,
      emulator: env.emulator,
      namespace: o.namespace,
      resources: [NAS, JOB, FS, BV, TPL, CCI],
      planned: [...plan.values()],
      census,
      since: seq0,
      waiting,
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
      refusedDeletes: log.filter(
        (e) =>
          e.endpoint !== undefined &&
          DELETE_ENDPOINTS.has(e.endpoint) &&
          e.status !== undefined &&
          e.status === o.repeatDeleteStatus,
      ).length,
      userResolutions,
      serviceCallsByEndpoint: countBy(log.map((e) => e.endpoint ?? `${e.method} ${e.path}`)),
      durationMs: Date.now() - began,
      observed: observedCount,
      observedWrites,
      deletes,
      onSecondAccount: [...(second?.objects ?? [])],
      steering,
      images,
      ...(webhook ? { admission: { ...admitted, webhook: { ...webhook.counts } } } : {}),
      ...(replicas
        ? {
            handovers: {
              ...replicas.handovers,
              callsByProcess: countBy(replicas.calls.map((c) => c.instance)),
            },
          }
        : {}),
      ...findings,
      createsRepeated: repeats.map((r) => r.received),
      violations: [
        ...findings.violations,
        ...repeats
          .filter((r) => r.duplicate)
          .map((r) => `a create the service made was repeated: ${r.received}`),
        ...oneActor,
        ...deleteViolations,
        ...imageViolations,
        ...steeringViolations,
        ...admissionViolations,
        ...(observedWrites > 0 ? [`${observedWrites} writing calls to observed NAS`] : []),
      ],
    };
  } finally {
    if (second) await removeConnections(env.kube, [second.connection]);
    await webhook?.stop();
    census.stop();
    env.emulator.faults.clear();
    env.emulator.state.behaviour = behaviour;
    await operator.kill();
  }
}

function countBy(keys: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of keys) out[k] = (out[k] ?? 0) + 1;
  return out;
}
