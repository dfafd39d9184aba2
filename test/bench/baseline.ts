/**
 * The benchmark's baseline: the least any controller must do for N NasVolumes and N
 * TrainingJobs. Per object: one create call, polls of its subscription until it
 * resolves, one status write (Ready=True). No finalizer, no annotations, no reads of
 * the remote resource, no events. The operator's figures divided by these are its
 * overhead.
 */
import { operatorConfigSchema } from "../../src/config/schema.js";
import { KubeClient } from "../../src/runtime/kube.js";
import type { KubeObject } from "../../src/runtime/resource.js";
import { ServiceClient } from "../../src/service/client.js";
import type { SubscriptionResult } from "../../src/service/schemas/create.js";
import { sleep } from "../support/operator-process.js";
import { inParallel, JOB, NAS, nasVolume, trainingJob } from "./workload.js";

/** Options of {@link runBaseline}. */
export interface BaselineOptions {
  kube: KubeClient;
  serviceBaseUrl: string;
  apiKey: string;
  namespace: string;
  prefix: string;
  n: number;
  jobsUseNas: boolean;
  /** Objects handled at once per kind (the operator's workers per controller). */
  concurrency: number;
  /** Creates sent at once. */
  createConcurrency: number;
  /** Interval of subscription polls. */
  pollMs: number;
}

/** What the baseline measured. */
export interface BaselineResult {
  /** First create to last status write, ms. */
  timeToAllReadyMs: number;
  /** Per object, create sent → status written, ms. */
  latenciesMs: number[];
}

/**
 * Creates the objects (as the benchmark does for the operator), then runs the
 * minimal controller over them with the operator's default client settings (service:
 * timeouts, retries, rate limit; Kubernetes: the client-side rate limit).
 */
export async function runBaseline(o: BaselineOptions): Promise<BaselineResult> {
  const config = operatorConfigSchema.parse({
    service: { baseUrl: o.serviceBaseUrl, allowInsecureHttp: true },
  });
  const defaults = config.service;
  // Status writes go through the operator's default client-side limit, as its writes do.
  const statusKube = new KubeClient(o.kube.config, {
    rateLimit: { qps: config.kube.qps, burst: config.kube.burst },
  });
  const service = new ServiceClient({
    baseUrl: o.serviceBaseUrl,
    apiKey: () => o.apiKey,
    timeoutMs: defaults.timeoutMs,
    retry: defaults.retry,
    rateLimit: defaults.rateLimit,
  });
  const applied = new Map<string, number>();
  const done: number[] = [];
  const nasIds = new Map<number, string>();
  const created = new Map<string, Promise<void>>();
  const resolvers = new Map<string, () => void>();
  for (const kind of [NAS.kind, JOB.kind]) {
    for (let i = 0; i < o.n; i++) {
      created.set(`${kind}/${i}`, new Promise<void>((r) => resolvers.set(`${kind}/${i}`, r)));
    }
  }
  const started = Date.now();
  try {
    // Applies as the benchmark does for the operator; each object's work starts once
    // its create returned, as a watch would deliver it.
    const objs: [typeof NAS, KubeObject, number][] = [];
    for (let i = 0; i < o.n; i++) {
      objs.push([NAS, nasVolume(o.namespace, o.prefix, i), i]);
      objs.push([JOB, trainingJob(o.namespace, o.prefix, i, o.jobsUseNas), i]);
    }
    const createAll = inParallel(objs, o.createConcurrency, async ([res, obj, i]) => {
      applied.set(`${res.kind}/${obj.metadata?.name}`, Date.now());
      await o.kube.create(res, obj);
      resolvers.get(`${res.kind}/${i}`)?.();
    });

    const poll = async (get: () => Promise<SubscriptionResult>): Promise<string> => {
      for (;;) {
        const r = await get();
        if (r.state === "Succeeded") return r.instanceId ?? "";
        if (r.state === "Failed") throw new Error(`subscription failed: ${r.message ?? ""}`);
        await sleep(o.pollMs);
      }
    };
    const markReady = async (res: typeof NAS, name: string, extra: Record<string, unknown>) => {
      const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
      await statusKube.patchStatus(
        res,
        { namespace: o.namespace, name },
        {
          ...extra,
          conditions: [
            {
              type: "Ready",
              status: "True",
              reason: "Available",
              message: "",
              lastTransitionTime: now,
              observedGeneration: 1,
            },
          ],
        },
      );
      done.push(Date.now() - (applied.get(`${res.kind}/${name}`) ?? started));
    };
    const indices = Array.from({ length: o.n }, (_, i) => i);
    const nasWork = inParallel(indices, o.concurrency, async (i) => {
      await created.get(`${NAS.kind}/${i}`);
      const spec = nasVolume(o.namespace, o.prefix, i).spec as Record<string, unknown>;
      const key = await service.subscribeNas({
        productCode: String(spec.productCode),
        storageParams: {
          name: String(spec.name),
          description: String(spec.description),
          storageCapacity: Number(spec.capacityGB),
          mountPath: String(spec.mountPath),
        },
      });
      const id = await poll(() => service.getNasSubscriptionResult(key));
      nasIds.set(i, id);
      await markReady(NAS, String(spec.name), {});
    });
    const jobWork = inParallel(indices, o.concurrency, async (i) => {
      await created.get(`${JOB.kind}/${i}`);
      const job = trainingJob(o.namespace, o.prefix, i, false).spec as Record<string, unknown>;
      let storageConfigs: { storageId: string; mountPath: string; onlyRead: boolean }[] | undefined;
      if (o.jobsUseNas) {
        while (!nasIds.has(i)) await sleep(o.pollMs);
        storageConfigs = [
          { storageId: nasIds.get(i) as string, mountPath: "/data", onlyRead: true },
        ];
      }
      const key = await service.createTrainingTask({
        name: String(job.taskName),
        createType: "DIRECT",
        trainingType: String(job.trainingType),
        trainingFramework: String(job.trainingFramework),
        imageType: String(job.imageType),
        image: String(job.image),
        productCode: String(job.productCode),
        workerCount: Number(job.workerCount),
        startCommand: String(job.startCommand),
        ...(storageConfigs ? { storageConfigs } : {}),
      });
      await poll(() => service.getTrainingSubscriptionResult(key));
      await markReady(JOB, String(job.taskName), {});
    });
    await Promise.all([createAll, nasWork, jobWork]);
    return { timeToAllReadyMs: Date.now() - started, latenciesMs: done };
  } finally {
    service.close();
  }
}
