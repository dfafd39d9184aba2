/**
 * The tenant-isolation scenario of `npm run bench` (skip it with --skip-connections):
 * two ServiceConnections against one emulator with two accounts. `calm` creates N
 * NasVolumes alone and its create-to-Ready is measured; then `hot`, whose connection
 * allows 2 requests per second, floods N NasVolumes (its limit saturated for the whole
 * phase; calm starts once every hot object was reconciled and waits at that limit)
 * while `calm` creates another N; calm's create-to-Ready is measured again. With
 * per-connection clients and limits the two figures match; with one shared client, or
 * workers held by hot's queue, the second would grow with hot's backlog.
 * The operator runs in-process (`runOperator`, the real wiring) against the bench's
 * control plane.
 */
import { runOperator } from "../../src/cli/run.js";
import { NAMESPACES } from "../../src/controllers/connections/registry.js";
import { SECRETS } from "../../src/controllers/connections/secrets.js";
import { serviceConnectionCrd } from "../../src/crds/serviceconnection.js";
import type { Manager } from "../../src/runtime/manager.js";
import type { BenchEnvironment } from "./environment.js";
import { latencyFigures, ReadyTracker, waitAllReady } from "./ready-tracker.js";
import { createNasBatch, ensureNamespace, NAS } from "./workload.js";

/** The accounts' keys (the emulator's tenants, added at the start of the scenario). */
export const CONNECTION_TENANTS = [
  { name: "hot", apiKey: "bench-hot-account-key-0001" },
  { name: "calm", apiKey: "bench-calm-account-key-0001" },
];

/** What the scenario measured. */
export interface ConnectionsFigures {
  n: number;
  /** hot's connection limit (requests per second, burst). */
  hotLimit: { ratePerSecond: number; burst: number };
  /** calm's create-to-Ready alone, ms. */
  calmAlone: { p50: number; p95: number; max: number };
  /** calm's create-to-Ready while hot is saturated, ms. */
  calmBesideSaturatedHot: { p50: number; p95: number; max: number };
  /** calm's create-to-Ready beside hot's objects all Ready, its limit lifted (the control), ms. */
  calmBesideSettledHot: { p50: number; p95: number; max: number };
  /** hot's objects Ready when calm's second batch was all Ready (of n). */
  hotReadyThen: number;
  /** Ratio of the p50s (beside saturated hot / alone). */
  p50Ratio: number;
  /**
   * Ratio of the p50s (beside saturated hot / beside settled hot): about 1 when hot's
   * saturated limit costs calm nothing beyond what hot's objects cost by existing.
   */
  p50RatioToControl: number;
}

const HOT_LIMIT = { ratePerSecond: 2, burst: 2 };
const b64 = (s: string) => Buffer.from(s).toString("base64");

/**
 * A ServiceConnection `name` for the account of `apiKey` (its Secret in
 * `secretNamespace`), allowed in `namespace` and made that namespace's connection.
 */
export async function addConnection(
  env: BenchEnvironment,
  c: {
    name: string;
    apiKey: string;
    secretNamespace: string;
    namespace: string;
    limits?: { ratePerSecond: number; burst: number };
  },
): Promise<void> {
  await env.kube.create(SECRETS, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: `${c.name}-key`, namespace: c.secretNamespace },
    data: { apiKey: b64(c.apiKey) },
  });
  await env.kube.create(serviceConnectionCrd, {
    apiVersion: "aidc.io/v1alpha1",
    kind: "ServiceConnection",
    metadata: { name: c.name },
    spec: {
      baseUrl: env.emulator.url,
      allowInsecureHttp: true,
      apiKeySecretRef: { namespace: c.secretNamespace, name: `${c.name}-key`, key: "apiKey" },
      allowedNamespaces: { names: [c.namespace] },
      ...(c.limits ? { limits: c.limits } : {}),
    },
  });
  await env.kube.patch(
    NAMESPACES,
    { namespace: "", name: c.namespace },
    { metadata: { annotations: { "aidc.io/service-connection": c.name } } },
  );
}

/**
 * `aidc-operator run` in this process (the real wiring) for the bench's emulator and
 * default account, watching `namespaces` (its own namespace `ops` among them); its log
 * is dropped. `stop` stops it as SIGTERM would.
 */
export async function startOperator(
  env: BenchEnvironment,
  ops: string,
  namespaces: readonly string[],
): Promise<{ stop(): Promise<void> }> {
  let stop: () => void = () => undefined;
  let manager: Manager | undefined;
  const stopSignal = new Promise<void>((resolve) => {
    stop = resolve;
  });
  const exited = runOperator({
    kubeconfig: env.kubeconfigPath,
    env: {
      AIDC_API_KEY: env.apiKey,
      AIDC_SERVICE_BASE_URL: env.emulator.url,
      AIDC_SERVICE_ALLOW_INSECURE_HTTP: "true",
      AIDC_LOG_LEVEL: "warn",
      POD_NAMESPACE: ops,
      AIDC_POLL_INTERVAL_MS: "5000",
      // Its own namespaces only: the baseline's objects (Ready, nothing bound, in
      // bench-baseline) would otherwise be ordered again through the default account.
      AIDC_WATCH_NAMESPACES: namespaces.join(","),
    },
    flags: { "metrics-port": "0" },
    stopSignal,
    logDestination: { write: () => true },
    onStarted: (m) => {
      manager = m;
    },
  });
  // Its controllers at work before the first create: a batch created while it starts
  // would time its startup, not its work.
  const deadline = Date.now() + 60_000;
  while (!manager?.running) {
    const ended = await Promise.race([exited, new Promise((r) => setTimeout(r, 50))]);
    if (typeof ended === "number") throw new Error(`aidc-operator run exited with ${ended}`);
    if (Date.now() > deadline) throw new Error("the operator's controllers did not start in 60 s");
  }
  return {
    stop: async () => {
      stop();
      await exited.catch(() => undefined);
    },
  };
}

/** Runs the scenario with `n` objects per batch; `progress` gets one line per step. */
export async function runConnectionsPhase(
  env: BenchEnvironment,
  n: number,
  timeoutMs: number,
  progress: (line: string) => void,
): Promise<ConnectionsFigures> {
  const { kube } = env;
  for (const t of CONNECTION_TENANTS) env.emulator.tenants.set(t.name, t.apiKey);
  const [ops, hotNs, calmNs] = ["bench-conn-ops", "bench-conn-hot", "bench-conn-calm"];
  for (const ns of [ops, hotNs, calmNs]) await ensureNamespace(kube, ns);
  for (const t of CONNECTION_TENANTS) {
    await addConnection(env, {
      name: `bench-${t.name}`,
      apiKey: t.apiKey,
      secretNamespace: ops,
      namespace: t.name === "hot" ? hotNs : calmNs,
      ...(t.name === "hot" ? { limits: HOT_LIMIT } : {}),
    });
  }

  const operator = await startOperator(env, ops, [ops, hotNs, calmNs]);
  try {
    const calm = new ReadyTracker(env.kc, kube, NAS, calmNs);
    const hot = new ReadyTracker(env.kc, kube, NAS, hotNs);
    await Promise.all([calm.start(), hot.start()]);

    progress(`connections: calm creates ${n} NasVolumes alone`);
    const first = await createNasBatch(kube, calm, calmNs, "alone", n);
    await waitAllReady(calm, first, timeoutMs);
    const alone = latencyFigures(calm.latencies());

    progress(
      `connections: hot floods ${n} at ${HOT_LIMIT.ratePerSecond}/s while calm creates ${n}`,
    );
    const calmBefore = calm.latencies().length;
    const hotNames = await createNasBatch(kube, hot, hotNs, "flood", n);
    // Calm's second batch meets hot saturated: every hot object has been reconciled
    // (its finalizer and first status written) and waits at hot's limit.
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const items = (await kube.list(NAS, hotNs)).items;
      const seen = items.filter(
        (o) => (o.status as { conditions?: unknown[] } | undefined)?.conditions,
      );
      if (seen.length >= n) break;
      if (Date.now() > deadline) throw new Error("hot's objects were not reconciled in time");
      await new Promise((r) => setTimeout(r, 200));
    }
    const hotBacklog = n - hot.notReady(hotNames).length;
    progress(`connections: hot saturated (${hotBacklog} of ${n} Ready); calm creates ${n}`);
    const second = await createNasBatch(kube, calm, calmNs, "beside", n);
    await waitAllReady(calm, second, timeoutMs);
    const hotReadyThen = n - hot.notReady(hotNames).length;
    const beside = latencyFigures(calm.latencies().slice(calmBefore));

    // The control: the same objects of hot, its limit lifted and all of them Ready; what
    // calm pays now is what hot's objects cost by being there (Kubernetes writes, CPU),
    // not hot's saturated limit.
    progress("connections: hot's limit lifted; once hot is Ready, calm creates another batch");
    await kube.patch(
      serviceConnectionCrd,
      { namespace: "", name: "bench-hot" },
      { spec: { limits: { ratePerSecond: 50, burst: 100 } } },
    );
    await waitAllReady(hot, hotNames, timeoutMs);
    const calmBeforeControl = calm.latencies().length;
    const third = await createNasBatch(kube, calm, calmNs, "control", n);
    await waitAllReady(calm, third, timeoutMs);
    const control = latencyFigures(calm.latencies().slice(calmBeforeControl));
    calm.stop();
    hot.stop();
    const ratio = (a: number, b: number) => Math.round((a / Math.max(1, b)) * 100) / 100;
    return {
      n,
      hotLimit: HOT_LIMIT,
      calmAlone: alone,
      calmBesideSaturatedHot: beside,
      calmBesideSettledHot: control,
      hotReadyThen,
      p50Ratio: ratio(beside.p50, alone.p50),
      p50RatioToControl: ratio(beside.p50, control.p50),
    };
  } finally {
    await operator.stop();
  }
}
