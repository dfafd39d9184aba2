/**
 * What the tests of the networks between the operator and the suite's API server share
 * (test/integration/kube-networks-kubeconfigs, -fronts and -faults): the admin's
 * kubeconfig and access, a test bed started before a file's tests and stopped after
 * them ({@link networkSuite}), and the helpers those files use, from one import.
 */
import type * as k8s from "@kubernetes/client-node";
import { beforeAll } from "vitest";
import { adminKubeConfig } from "./kube.js";
import {
  adminAccess,
  type KubeconfigAccess,
  type NetworkTestBed,
  startNetworkTestBed,
} from "./network-operator.js";

export { createNamespace, eventually } from "./kube.js";
export {
  adminAccess,
  READY_MS,
  readyThrough,
  startNetworkOperator,
  UserNasVolumes,
  writeKubeconfig,
} from "./network-operator.js";
export { statusWithToken, tokenAccount } from "./service-account-tokens.js";
export { TcpProxy } from "./tcp-proxy.js";

/** What a file's tests reach the API server and the emulator with. */
export interface NetworkSuite {
  /** The admin's kubeconfig of the suite's API server. */
  admin: k8s.KubeConfig;
  /** The admin's access (server, CA, client certificate), for the kubeconfigs a test writes. */
  access: KubeconfigAccess;
  /** The file's test bed (emulator, directory): started in `beforeAll`, read it in a test. */
  readonly bed: NetworkTestBed;
}

/** Call in a `describe`: the bed starts before its tests and stops after them. */
export function networkSuite(): NetworkSuite {
  const admin = adminKubeConfig();
  let bed: NetworkTestBed | undefined;
  beforeAll(async () => {
    const started = await startNetworkTestBed(admin);
    bed = started;
    return () => started.stop();
  });
  return {
    admin,
    access: adminAccess(admin),
    get bed() {
      if (!bed) throw new Error("the network test bed starts in beforeAll");
      return bed;
    },
  };
}
