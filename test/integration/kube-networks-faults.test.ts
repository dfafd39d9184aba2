import { mkdir, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ApiFront } from "../support/api-front.js";
import {
  createNamespace,
  eventually,
  networkSuite,
  READY_MS,
  startNetworkOperator,
  statusWithToken,
  TcpProxy,
  tokenAccount,
  UserNasVolumes,
  writeKubeconfig,
} from "../support/kube-networks.js";

/**
 * The operator against what goes wrong between it and the API server: a connection
 * that goes silent, a server that answers 429 with Retry-After, and in a pod, a service
 * account token that is replaced and revoked.
 */
describe("the operator when the way to the API server misbehaves", () => {
  const net = networkSuite();
  const { admin, access } = net;

  it("recovers within 60 s when its connection goes silent (no FIN, no RST)", async () => {
    const tcp = new TcpProxy(Number(new URL(access.server).port));
    const port = await tcp.start();
    const namespace = await createNamespace(admin, "net-silent");
    const kubeconfig = await writeKubeconfig(
      join(net.bed.dir, "silent"),
      { silent: { ...access, server: `https://127.0.0.1:${port}` } },
      "silent",
    );
    const op = await startNetworkOperator({
      emulatorUrl: net.bed.emulator.url,
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
      join(net.bed.dir, "throttled"),
      { throttled: { server: front.url, ca: front.caCert } },
      "throttled",
    );
    const op = await startNetworkOperator({
      emulatorUrl: net.bed.emulator.url,
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
    const namespace = await createNamespace(admin, "net-incluster");
    const account = await tokenAccount(admin, namespace);
    const saDir = join(net.bed.dir, "serviceaccount");
    await mkdir(saDir);
    const ca = access.ca ?? Buffer.alloc(0);
    await writeFile(join(saDir, "ca.crt"), ca);
    await writeFile(join(saDir, "namespace"), namespace);
    const first = await account.mint("token-one");
    await writeFile(join(saDir, "token"), first);

    const server = new URL(access.server);
    const op = await startNetworkOperator({
      emulatorUrl: net.bed.emulator.url,
      namespaces: [namespace],
      serviceAccountDir: saDir,
      env: { KUBERNETES_SERVICE_HOST: server.hostname, KUBERNETES_SERVICE_PORT: server.port },
    });
    try {
      const nas = new UserNasVolumes(admin, namespace);
      await nas.create("before");
      await nas.waitReady("before", READY_MS, op);

      // As the kubelet rotates it: the new token replaces the file at once.
      const second = await account.mint("token-two");
      await writeFile(join(saDir, "token.new"), second);
      await rename(join(saDir, "token.new"), join(saDir, "token"));
      await account.revoke("token-one");
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
      await account.cleanup();
    }
  }, 150_000);
});
