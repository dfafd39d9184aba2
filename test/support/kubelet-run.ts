/**
 * What the test kubelet (kubelet.ts) runs for real: a pod that runs to its end
 * (restartPolicy Never, as a Job's) with one container of the operator's image. The
 * container runs as the Dockerfile's ENTRYPOINT would, `node <IMAGE_NODE_ARGS>
 * dist/bundle/main.js` of an image layout (image-layout.ts), with the container's args
 * (else the image's CMD, `run`) and env, and the pod's ServiceAccount as its
 * credentials: a token the TokenRequest API issues for it, bound to the pod, in a
 * kubeconfig for the test API server ($KUBECONFIG; in a cluster the CLI reads the same
 * from the pod's service-account files), none when automountServiceAccountToken (the
 * pod's, else the ServiceAccount's) is false. Neither the security context nor a
 * read-only root filesystem is enforced.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as k8s from "@kubernetes/client-node";
import type { ImageLayout } from "./image-layout.js";

/** How a run container ended: its exit code and what it printed (stdout, then stderr). */
export interface ContainerExit {
  exitCode: number;
  log: string;
}

/** A container started by a {@link PodRunner}. */
export interface PodRun {
  /** Resolves when it exits; rejects when it could not be started (e.g. no token). */
  exited: Promise<ContainerExit>;
  /** Ends it (its pod is being deleted). */
  kill(): void;
}

/** Runs the pods it is for; the kubelet reports the others without running them. */
export interface PodRunner {
  runs(pod: k8s.V1Pod): boolean;
  start(pod: k8s.V1Pod): PodRun;
}

/**
 * Runs pods of `repository` (any tag or digest) from `layout`, with credentials that
 * `admin` asks the TokenRequest API for; see the module comment.
 */
export function operatorImageRunner(
  admin: k8s.KubeConfig,
  layout: ImageLayout,
  repository: string,
): PodRunner {
  const core = admin.makeApiClient(k8s.CoreV1Api);
  const ofImage = (image = "") =>
    image.startsWith(`${repository}:`) || image.startsWith(`${repository}@`);

  /**
   * A kubeconfig file in `dir` with a token of the pod's ServiceAccount: its path as
   * $KUBECONFIG, or nothing when the token is not mounted.
   */
  const credentialsEnv = async (pod: k8s.V1Pod, dir: string): Promise<Record<string, string>> => {
    const { name, namespace, uid } = pod.metadata as k8s.V1ObjectMeta;
    const account = pod.spec?.serviceAccountName ?? "default";
    const mounted =
      pod.spec?.automountServiceAccountToken ??
      (await core.readNamespacedServiceAccount({ namespace: namespace as string, name: account }))
        .automountServiceAccountToken;
    if (mounted === false) return {};
    const issued = await core.createNamespacedServiceAccountToken({
      namespace: namespace as string,
      name: account,
      // No audience: the API server's own.
      body: {
        spec: { audiences: [], boundObjectRef: { apiVersion: "v1", kind: "Pod", name, uid } },
      },
    });
    const server = admin.getCurrentCluster() as k8s.Cluster;
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ ...server, name: "cluster" }],
      users: [{ name: account, token: issued.status?.token }],
      contexts: [{ name: "pod", cluster: "cluster", user: account }],
      currentContext: "pod",
    });
    const path = join(dir, "kubeconfig");
    await writeFile(path, kc.exportConfig(), { mode: 0o600 });
    return { KUBECONFIG: path };
  };

  /** The container's env: values and the pod's own name and namespace. */
  const envOf = (pod: k8s.V1Pod, container: k8s.V1Container): Record<string, string> => {
    const env: Record<string, string> = {};
    for (const e of container.env ?? []) {
      const field = e.valueFrom?.fieldRef?.fieldPath;
      if (field === "metadata.name" || field === "metadata.namespace") {
        env[e.name] = pod.metadata?.[field.slice("metadata.".length) as "name"] ?? "";
      } else if (e.valueFrom) {
        throw new Error(`env ${e.name}: only values and the pod's name and namespace are set here`);
      } else {
        env[e.name] = e.value ?? "";
      }
    }
    return env;
  };

  return {
    runs: (pod) =>
      pod.spec?.restartPolicy === "Never" &&
      pod.spec.containers.length === 1 &&
      ofImage(pod.spec.containers[0]?.image),
    start: (pod) => {
      const container = pod.spec?.containers[0] as k8s.V1Container;
      let killed = false;
      let kill = () => {
        killed = true;
      };
      const exited = (async () => {
        if (container.command) throw new Error("a command other than the image's ENTRYPOINT");
        const env = envOf(pod, container);
        const dir = await mkdtemp(join(tmpdir(), "aidc-kubelet-"));
        try {
          const credentials = await credentialsEnv(pod, dir);
          if (killed) return { exitCode: 137, log: "" };
          // The Dockerfile's ENV; HOME is the pod's own, so no ~/.kube/config is found.
          const p = layout.start(container.args ?? ["run"], {
            NODE_ENV: "production",
            ...env,
            HOME: dir,
            ...credentials,
          });
          kill = () => p.child.kill("SIGKILL");
          const code = await p.exited;
          return { exitCode: code ?? 137, log: p.out.stdout + p.out.stderr };
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      })();
      return { exited, kill: () => kill() };
    },
  };
}
