/**
 * The fairness scenario of `npm run bench` (`--only-fairness` runs it alone,
 * `--skip-fairness` leaves it out): a calm tenant (a ServiceConnection) creates N
 * NasVolumes alone (after a few unmeasured ones, so that its connection's client and the
 * operator's code paths are as warm as beside a backlog), then beside a backlog of B new
 * objects on the default connection, then beside a backlog of B on another
 * ServiceConnection; its create-to-Ready p50 is measured each time, over `batches`
 * batches (each created {@link BATCH_PAUSE_MS} after the one before is Ready, all while
 * the backlog is under way), so that one slow second of the machine is not the window's
 * p50. Connections are flows (workqueue.ts, outbound-guards.ts): a backlog takes at most its share of the workers
 * and of the Kubernetes write budget, so calm's p50 beside one stays near its p50 alone.
 * The operator runs as its own process with the image's Node options (as in production:
 * the bench's creates, watches and emulator do not share its event loop), ready before
 * the first create.
 */
import { freePort } from "../../src/controlplane/controlplane.js";
import { IMAGE_NODE_ARGS, startOperatorProcess } from "../support/operator-process.js";
import { addConnection } from "./connections-phase.js";
import type { BenchEnvironment } from "./environment.js";
import { ApiPacer, type WindowFigures, WindowProbe } from "./fairness-probe.js";
import {
  type LatencyFigures,
  latencyFigures,
  ReadyTracker,
  waitAllReady,
} from "./ready-tracker.js";
import { createNasBatch, ensureNamespace, NAS } from "./workload.js";

/** The accounts of the scenario's ServiceConnections (the emulator's tenants). */
const TENANTS = [
  { name: "fair-calm", apiKey: "bench-fair-calm-key-0001" },
  { name: "fair-busy", apiKey: "bench-fair-busy-key-0001" },
];

/**
 * The pause between a window's batches: calm's Kubernetes budget (`kube.burst` at
 * `kube.qps`) and its account's burst fill again, so each batch starts as the first did
 * (back to back, a batch waits at the budget the one before spent: 1.8 s instead of 0.3).
 */
const BATCH_PAUSE_MS = 4000;

/** What the scenario measured. */
export interface FairnessFigures {
  n: number;
  /** Batches of `n` per window; the window's figures pool them. */
  batches: number;
  backlog: number;
  calmAlone: LatencyFigures;
  /** calm beside B new objects of the default connection. */
  calmBesideDefaultBacklog: LatencyFigures;
  /** Of the default connection's backlog, Ready when calm's batch was all Ready. */
  defaultReadyThen: number;
  /** calm beside B new objects of another ServiceConnection. */
  calmBesideConnectionBacklog: LatencyFigures;
  busyReadyThen: number;
  /** Each batch's p50 (ms) per window, in order: alone, beside default, beside connection. */
  batchP50Ms: { alone: number[]; besideDefault: number[]; besideConnection: number[] };
  /** p50 beside the default connection's backlog / alone. */
  p50RatioDefault: number;
  /** p50 beside the other connection's backlog / alone. */
  p50RatioConnection: number;
  /**
   * Where calm's time went in each window (fairness-probe.ts): its steps' p50, the
   * processes' CPU, the API server's PATCH time and write rate, the operator's
   * request latency, this process's event-loop delay.
   */
  where: { alone: WindowFigures; besideDefault: WindowFigures; besideConnection: WindowFigures };
}

/** What the scenario is run with. */
export interface FairnessOptions {
  /** NasVolumes per batch of calm. */
  n: number;
  /** Batches per window. */
  batches: number;
  /** New objects of each backlog. */
  backlog: number;
  timeoutMs: number;
  /** The operator's poll interval (`AIDC_POLL_INTERVAL_MS`); 0: 5 s. */
  pollIntervalMs: number;
  /** Run `dist/` (built first) instead of the sources. */
  compiled: boolean;
}

/** Runs the scenario; see the module comment. */
export async function runFairnessPhase(
  env: BenchEnvironment,
  options: FairnessOptions,
  progress: (line: string) => void,
): Promise<FairnessFigures> {
  const { n, batches, backlog, timeoutMs, compiled } = options;
  const { kube } = env;
  for (const t of TENANTS) env.emulator.tenants.set(t.name, t.apiKey);
  const ops = "bench-fair-ops";
  const [calmNs, busyNs, defaultNs] = ["bench-fair-calm", "bench-fair-busy", "bench-fair-default"];
  for (const ns of [ops, calmNs, busyNs, defaultNs]) await ensureNamespace(kube, ns);
  for (const [t, namespace] of [
    [TENANTS[0], calmNs],
    [TENANTS[1], busyNs],
  ] as const) {
    if (t) await addConnection(env, { ...t, secretNamespace: ops, namespace });
  }

  const operator = startOperatorProcess({
    kubeconfig: env.kubeconfigPath,
    serviceBaseUrl: env.emulator.url,
    apiKey: env.apiKey,
    metricsPort: await freePort(),
    nodeArgs: [...IMAGE_NODE_ARGS],
    ...(compiled ? { compiled: true } : {}),
    env: {
      AIDC_LOG_LEVEL: "warn",
      POD_NAMESPACE: ops,
      AIDC_POLL_INTERVAL_MS: String(options.pollIntervalMs || 5000),
      AIDC_WATCH_NAMESPACES: [ops, calmNs, busyNs, defaultNs].join(","),
    },
  });
  let pacer: ApiPacer | undefined;
  try {
    await operator.waitReady(120_000);
    const calm = new ReadyTracker(env.kc, kube, NAS, calmNs);
    const busy = new ReadyTracker(env.kc, kube, NAS, busyNs);
    const deflt = new ReadyTracker(env.kc, kube, NAS, defaultNs);
    await Promise.all([calm.start(), busy.start(), deflt.start()]);
    const pids = { operator: operator.pid, ...(env.plane?.pids() ?? {}) };
    pacer = new ApiPacer(env.kubeconfigPath, ops);
    await pacer.ready();
    /** calm's batches `prefix-i`, each Ready, and where its time went meanwhile. */
    const measured = async (prefix: string, onReady = () => {}) => {
      const probe = new WindowProbe(env.kc, pids, () => operator.metrics(), pacer);
      await probe.start();
      const all: string[] = [];
      const batchP50Ms: number[] = [];
      for (let i = 0; i < batches; i++) {
        if (i > 0) await new Promise((r) => setTimeout(r, BATCH_PAUSE_MS));
        const batch = await createNasBatch(kube, calm, calmNs, `${prefix}-${i}`, n);
        await waitAllReady(calm, batch, timeoutMs);
        batchP50Ms.push(latencyFigures(calm.latencies(batch)).p50);
        all.push(...batch);
      }
      onReady();
      const where = await probe.stop(calm.stages(all));
      const latency = latencyFigures(calm.latencies(all));
      progress(
        `fairness: calm p50 ${latency.p50} ms (batches ${batchP50Ms.join(", ")} ms); ${JSON.stringify(where)}`,
      );
      return { latency, batchP50Ms, where };
    };
    /** calm's batch `prefix` beside a backlog created just before it in `ns`. */
    const beside = async (tracker: ReadyTracker, ns: string, prefix: string) => {
      progress(`fairness: ${backlog} new objects in ${ns}, then calm creates ${batches}×${n}`);
      const backlogNames = await createNasBatch(kube, tracker, ns, `${prefix}-backlog`, backlog);
      let readyThen = 0;
      const { latency, batchP50Ms, where } = await measured(prefix, () => {
        readyThen = backlog - tracker.notReady(backlogNames).length;
      });
      progress(`fairness: ${readyThen} of the backlog Ready when calm was`);
      await waitAllReady(tracker, backlogNames, timeoutMs);
      return { latency, batchP50Ms, readyThen, where };
    };

    await waitAllReady(calm, await createNasBatch(kube, calm, calmNs, "warm", 5), timeoutMs);
    progress(`fairness: calm creates ${batches}×${n} NasVolumes alone`);
    const { latency: alone, batchP50Ms: aloneBatches, where: whereAlone } = await measured("alone");
    const onDefault = await beside(deflt, defaultNs, "by-default");
    const onConnection = await beside(busy, busyNs, "by-connection");
    calm.stop();
    busy.stop();
    deflt.stop();
    const ratio = (a: number, b: number) => Math.round((a / Math.max(1, b)) * 100) / 100;
    return {
      n,
      batches,
      backlog,
      calmAlone: alone,
      calmBesideDefaultBacklog: onDefault.latency,
      defaultReadyThen: onDefault.readyThen,
      calmBesideConnectionBacklog: onConnection.latency,
      busyReadyThen: onConnection.readyThen,
      batchP50Ms: {
        alone: aloneBatches,
        besideDefault: onDefault.batchP50Ms,
        besideConnection: onConnection.batchP50Ms,
      },
      p50RatioDefault: ratio(onDefault.latency.p50, alone.p50),
      p50RatioConnection: ratio(onConnection.latency.p50, alone.p50),
      where: {
        alone: whereAlone,
        besideDefault: onDefault.where,
        besideConnection: onConnection.where,
      },
    };
  } finally {
    pacer?.stop();
    await operator.stop();
  }
}
