import { request } from "node:https";
import { join } from "node:path";

/**
 * The kube-controller-manager controllers the local control plane runs: what makes
 * deletion behave as in a cluster, a Deployment's ReplicaSets and pods, and a Job's pods.
 * There is no scheduler or kubelet: a pod stays Pending unless a test binds it and
 * reports its status (test/support/kubelet.ts). Controllers that need nodes, a kubelet
 * or a cloud (and the token controller, which needs nothing here) stay off.
 */
export const CONTROLLER_MANAGER_CONTROLLERS = [
  // ownerReferences: deleting an owner deletes its dependents (a TrainingJob's Services
  // and EndpointSlices), `--cascade=foreground` and orphaning work.
  "garbage-collector-controller",
  // Deleting a namespace deletes everything in it, then the namespace.
  "namespace-controller",
  // ClusterRoles with an aggregationRule (the built-in admin, edit and view) gather the
  // rules of the roles labelled for them, such as the operator's aggregated roles.
  "clusterrole-aggregation-controller",
  // A Deployment's ReplicaSets, their pods and the rollout status `helm --wait` reads.
  "deployment-controller",
  "replicaset-controller",
  // A Job's pods and its Complete or Failed condition, which Helm waits on for a hook
  // Job such as the chart's pre-delete uninstall check.
  "job-controller",
] as const;

/** Where and how to start kube-controller-manager. */
export interface ControllerManagerSetup {
  /** Admin kubeconfig (the controllers run with its credentials, in system:masters). */
  kubeconfig: string;
  /** Directory for its self-signed serving certificate. */
  dir: string;
  /** Loopback port of its /healthz. */
  port: number;
}

/**
 * The flags of kube-controller-manager for the local control plane: one instance, no
 * leader election, the controllers of {@link CONTROLLER_MANAGER_CONTROLLERS} only, all of
 * them acting with the admin's credentials rather than one service account each (a
 * cluster's `--use-service-account-credentials`), which changes who acts, not what.
 */
export function controllerManagerArgs(setup: ControllerManagerSetup): string[] {
  return [
    `--kubeconfig=${setup.kubeconfig}`,
    // No delegated authentication or authorization: only /healthz is read, which is
    // always allowed, and nothing else listens on the loopback port.
    "--bind-address=127.0.0.1",
    `--secure-port=${setup.port}`,
    `--cert-dir=${join(setup.dir, "controller-manager-certs")}`,
    "--leader-elect=false",
    `--controllers=${CONTROLLER_MANAGER_CONTROLLERS.join(",")}`,
    "--use-service-account-credentials=false",
  ];
}

/** True when kube-controller-manager on `port` answers /healthz with ok. */
export function controllerManagerHealthy(port: number): Promise<boolean> {
  return new Promise((resolveHealth, reject) => {
    // Its serving certificate is self-signed, made at start; the loopback is ours.
    const req = request(
      `https://127.0.0.1:${port}/healthz`,
      { rejectUnauthorized: false, timeout: 5000 },
      (res) => {
        let body = "";
        res.on("data", (d) => {
          body += d;
        });
        res.on("end", () => resolveHealth(res.statusCode === 200 && body.trim() === "ok"));
      },
    );
    req.on("error", reject);
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.end();
  });
}
