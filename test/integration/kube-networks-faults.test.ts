import { mkdir, rename, writeFile } from "node:fs/promises";
import { request } from "node:https";
import { join } from "node:path";
import * as k8s from "@kubernetes/client-node";
import { beforeAll, describe, expect, it } from "vitest";
import { ApiFront } from "../support/api-front.js";
import { adminKubeConfig, createNamespace, eventually } from "../support/kube.js";
import {
  adminAccess,
  type NetworkTestBed,
  READY_MS,
  startNetworkOperator,
  startNetworkTestBed,
  UserNasVolumes,
  writeKubeconfig,
} from "../support/network-operator.js";
import { TcpProxy } from "../support/tcp-proxy.js";

/** The status of a GET of `path` with `token`, straight to the API server. */
function statusWithToken(server: string, ca: Buffer, token: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${server}${path}`,
      { ca, headers: { authorization: `Bearer ${token}` }, timeout: 5_000 },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on("error", reject);
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.end();
  });
}

/**
 * The operator against what goes wrong between it and the API server: a connection
 * that goes silent, a server that answers 429 with Retry-After, and in a pod, a service
 * account token that is replaced and revoked.
 */
describe("the operator when the way to the API server misbehaves", () => {
  const admin = adminKubeConfig();
  const access = adminAccess(admin);
  let bed: NetworkTestBed;

  beforeAll(async () => {
    bed = await startNetworkTestBed(admin);
    return () => bed.stop();
  });

  it("recovers within 60 s when its connection goes silent (no FIN, no RST)", async () => {
    const tcp = new TcpProxy(Number(new URL(access.server).port));
    const port = await tcp.start();
    const namespace = await createNamespace(admin, "net-silent");
    const kubeconfig = await writeKubeconfig(
      join(bed.dir, "silent"),
      { silent: { ...access, server: `https://127.0.0.1:${port}` } },
      "silent",
    );
    const op = await startNetworkOperator({
      emulatorUrl: bed.emulator.url,
      namespaces: [namespace],
      kubeconfig,
    });
    const nas = new UserNasVolumes(admin, namespace);
    try {
      await nas.create("before");
      await nas.waitReady("before", READY_MS, op);
      const connections = tcp.accepted;
      tcp.freeze();
      await nas.create("after");
      await nas.waitReady("after", 60_000, op);
      expect(tcp.accepted).toBeGreaterThan(connections);
    } finally {
      await op.stop();
      await tcp.stop();
    }
  }, 150_000);

  it("waits as long as a 429's Retry-After says, then succeeds", async () => {
    const namespace = await createNamespace(admin, "net-429");
    const listPath = `/apis/aidc.io/v1alpha1/namespaces/${namespace}/nasvolumes`;
    const isList = (method: string, path: string, query: URLSearchParams) =>
      method === "GET" && path === listPath && query.get("watch") !== "true";
    const front = await new ApiFront({
      upstream: admin,
      protocols: "h2,http/1.1",
      throttle: { match: isList, times: 2, retryAfterSeconds: 2 },
    }).start();
    const kubeconfig = await writeKubeconfig(
      join(bed.dir, "throttled"),
      { throttled: { server: front.url, ca: front.caCert } },
      "throttled",
    );
    const op = await startNetworkOperator({
      emulatorUrl: bed.emulator.url,
      namespaces: [namespace],
      kubeconfig,
    });
    try {
      const nas = new UserNasVolumes(admin, namespace);
      await nas.create("throttled");
      await nas.waitReady("throttled", READY_MS, op);
    } finally {
      await op.stop();
      await front.stop();
    }
    const lists = front.requests.filter((r) => isList(r.method, r.path, r.query));
    expect(lists.slice(0, 3).map((r) => r.status)).toEqual([429, 429, 200]);
    // Each retry came no sooner than the 2 s it was told (a few ms of timer slack).
    for (const [i, r] of lists.slice(1, 3).entries()) {
      expect(r.at - (lists[i]?.at ?? 0)).toBeGreaterThanOrEqual(1_990);
    }
  });

  it("in a pod, keeps working when its token file is replaced and the old token revoked", async () => {
    const core = admin.makeApiClient(k8s.CoreV1Api);
    const rbac = admin.makeApiClient(k8s.RbacAuthorizationV1Api);
    const namespace = await createNamespace(admin, "net-incluster");
    const account = "aidc-operator";
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: account } } });
    const binding = `${namespace}-admin`;
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: binding },
        roleRef: {
          apiGroup: "rbac.authorization.k8s.io",
          kind: "ClusterRole",
          name: "cluster-admin",
        },
        subjects: [{ kind: "ServiceAccount", name: account, namespace }],
      },
    });
    /** A token of the account bound to a Secret of its own: deleting the Secret revokes it. */
    const mint = async (secret: string): Promise<string> => {
      const s = await core.createNamespacedSecret({
        namespace,
        body: { metadata: { name: secret } },
      });
      const req = await core.createNamespacedServiceAccountToken({
        namespace,
        name: account,
        body: {
          spec: {
            audiences: ["https://kubernetes.default.svc"],
            expirationSeconds: 3600,
            boundObjectRef: {
              apiVersion: "v1",
              kind: "Secret",
              name: secret,
              uid: s.metadata?.uid,
            },
          },
        },
      });
      return req.status?.token ?? "";
    };
    const saDir = join(bed.dir, "serviceaccount");
    await mkdir(saDir);
    const ca = access.ca ?? Buffer.alloc(0);
    await writeFile(join(saDir, "ca.crt"), ca);
    await writeFile(join(saDir, "namespace"), namespace);
    const first = await mint("token-one");
    await writeFile(join(saDir, "token"), first);

    const server = new URL(access.server);
    const op = await startNetworkOperator({
      emulatorUrl: bed.emulator.url,
      namespaces: [namespace],
      serviceAccountDir: saDir,
      env: { KUBERNETES_SERVICE_HOST: server.hostname, KUBERNETES_SERVICE_PORT: server.port },
    });
    try {
      const nas = new UserNasVolumes(admin, namespace);
      await nas.create("before");
      await nas.waitReady("before", READY_MS, op);

      // As the kubelet rotates it: the new token replaces the file at once.
      const second = await mint("token-two");
      await writeFile(join(saDir, "token.new"), second);
      await rename(join(saDir, "token.new"), join(saDir, "token"));
      await core.deleteNamespacedSecret({ namespace, name: "token-one" });
      const probe = `/api/v1/namespaces/${namespace}`;
      // The API server caches a token's verdict for 10 s.
      await eventually(
        async () => (await statusWithToken(access.server, ca, first, probe)) === 401,
        30_000,
        500,
      );
      expect(await statusWithToken(access.server, ca, second, probe)).toBe(200);

      await nas.create("after");
      await nas.waitReady("after", 20_000, op);
    } finally {
      await op.stop();
      await rbac.deleteClusterRoleBinding({ name: binding });
    }
  }, 150_000);
});
