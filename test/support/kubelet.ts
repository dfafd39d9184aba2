import * as k8s from "@kubernetes/client-node";
import { randomSuffix } from "./chart.js";
import type { ContainerExit, PodRun, PodRunner } from "./kubelet-run.js";

/**
 * A stand-in for a scheduler and a kubelet on the test control plane, which has neither:
 * it registers a Ready Node, binds each pod of the namespaces it serves to it, and
 * reports a bound pod Running and Ready, or, when `neverStarts` matches an image of the
 * pod, Pending with that container in ImagePullBackOff. A pod being deleted is deleted at
 * once, as a kubelet does once its containers stop. It runs only the pods a `runner`
 * runs (kubelet-run.ts): Running, then Succeeded or Failed by the container's exit code.
 */
export interface Kubelet {
  readonly node: string;
  /** Serves the pods of `namespace` from now on. */
  serve(namespace: string): void;
  /** The pods of `namespace` its runner ran to their end, in the order they ended. */
  ran(namespace: string): { pod: string; exit: ContainerExit }[];
  /** The pods of `namespace` not being deleted. */
  pods(namespace: string): Promise<k8s.V1Pod[]>;
  /** Stops, deletes the pods bound to its Node (at once) and the Node. */
  stop(): Promise<void>;
}

const TICK_MS = 100;

/** Whether `pod` reports its Ready condition true. */
export function podReady(pod: k8s.V1Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
}

export async function startKubelet(
  kc: k8s.KubeConfig,
  neverStarts: (image: string) => boolean = () => false,
  runner?: PodRunner,
): Promise<Kubelet> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const node = `kubelet-${randomSuffix()}`;
  const namespaces = new Set<string>();
  const ready = { type: "Ready", status: "True", reason: "KubeletReady" };
  await core.createNode({ body: { metadata: { name: node } } });
  const created = await core.readNode({ name: node });
  const now = new Date();
  created.status = {
    conditions: [{ ...ready, lastHeartbeatTime: now, lastTransitionTime: now }],
    addresses: [{ type: "InternalIP", address: "127.0.0.1" }],
  };
  await core.replaceNodeStatus({ name: node, body: created });

  let podIPs = 0;
  /** The containers `runner` started, by pod uid; `exit` once ended (an Error: not started). */
  const runs = new Map<string, { run: PodRun; exit?: ContainerExit | Error }>();
  const ran: { namespace: string; pod: string; exit: ContainerExit }[] = [];
  const run = async (pod: k8s.V1Pod) => {
    const name = pod.metadata?.name as string;
    const namespace = pod.metadata?.namespace as string;
    if (!pod.spec?.nodeName) {
      const target = { kind: "Node", name: node };
      await core.createNamespacedPodBinding({
        name,
        namespace,
        body: { metadata: { name }, target },
      });
    } else if (pod.spec.nodeName !== node) {
      return;
    } else if (pod.metadata?.deletionTimestamp) {
      runs.get(pod.metadata.uid as string)?.run.kill();
      await core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 });
    } else if (runner?.runs(pod)) {
      const uid = pod.metadata?.uid as string;
      let r = runs.get(uid);
      if (!r) {
        const started = { run: runner.start(pod) } as { run: PodRun; exit?: ContainerExit | Error };
        started.run.exited.then(
          (exit) => {
            started.exit = exit;
            ran.push({ namespace, pod: name, exit });
          },
          (err: Error) => {
            started.exit = err;
          },
        );
        runs.set(uid, started);
        r = started;
      }
      const phase = r.exit === undefined ? "Running" : exitPhase(r.exit);
      if (pod.status?.phase !== phase) {
        await core.replaceNamespacedPodStatus({ name, namespace, body: withStatus(pod, r.exit) });
      }
    } else if (!pod.status?.conditions?.some((c) => c.type === "Ready")) {
      await core.replaceNamespacedPodStatus({ name, namespace, body: withStatus(pod) });
    }
  };
  /** `pod` as a kubelet reports it: running, or waiting (`neverStarts`), or ended as `exit` says. */
  const withStatus = (pod: k8s.V1Pod, exit?: ContainerExit | Error): k8s.V1Pod => {
    const containers = pod.spec?.containers ?? [];
    const starts = exit === undefined && !containers.some((c) => neverStarts(c.image ?? ""));
    const t = new Date();
    const startedAt = pod.status?.startTime ?? t;
    const ended = exit && {
      terminated: {
        startedAt,
        finishedAt: t,
        ...(exit instanceof Error
          ? { exitCode: 128, reason: "ContainerCannotRun", message: exit.message }
          : { exitCode: exit.exitCode, reason: exit.exitCode === 0 ? "Completed" : "Error" }),
      },
    };
    const condition = (type: string, ok: boolean) => ({
      type,
      status: ok ? "True" : "False",
      lastTransitionTime: t,
      ...(ok ? {} : { reason: "ContainersNotReady" }),
    });
    if (!pod.status?.podIP) podIPs += 1;
    pod.status = {
      phase: exit ? exitPhase(exit) : starts ? "Running" : "Pending",
      hostIP: "127.0.0.1",
      podIP: pod.status?.podIP ?? `10.244.${podIPs >> 8}.${podIPs & 255}`,
      startTime: startedAt,
      conditions: [
        condition("PodScheduled", true),
        condition("Initialized", true),
        condition("ContainersReady", starts),
        condition("Ready", starts),
      ],
      containerStatuses: containers.map((c) => ({
        name: c.name,
        image: c.image ?? "",
        imageID: "",
        ready: starts,
        started: starts,
        restartCount: 0,
        state:
          ended ??
          (starts
            ? { running: { startedAt } }
            : { waiting: { reason: "ImagePullBackOff", message: `Back-off pulling ${c.image}` } }),
      })),
    };
    return pod;
  };

  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      for (const namespace of namespaces) {
        const pods = await core.listNamespacedPod({ namespace }).catch(() => ({ items: [] }));
        // A conflict or a pod gone meanwhile is seen again at the next tick.
        for (const pod of pods.items) await run(pod).catch(() => undefined);
      }
      await new Promise((r) => setTimeout(r, TICK_MS));
    }
  })();

  return {
    node,
    ran: (namespace) => ran.filter((r) => r.namespace === namespace),
    serve: (namespace) => {
      namespaces.add(namespace);
    },
    pods: async (namespace) =>
      (await core.listNamespacedPod({ namespace })).items.filter(
        (p) => !p.metadata?.deletionTimestamp,
      ),
    stop: async () => {
      stopped = true;
      await loop;
      for (const { run } of runs.values()) run.kill();
      for (const namespace of namespaces) {
        const pods = await core.listNamespacedPod({ namespace }).catch(() => ({ items: [] }));
        for (const pod of pods.items.filter((p) => p.spec?.nodeName === node)) {
          const name = pod.metadata?.name as string;
          await core
            .deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 })
            .catch(() => undefined);
        }
      }
      await core.deleteNode({ name: node });
    },
  };
}

/** The phase of a pod whose one container ended so. */
function exitPhase(exit: ContainerExit | Error): "Succeeded" | "Failed" {
  return !(exit instanceof Error) && exit.exitCode === 0 ? "Succeeded" : "Failed";
}
