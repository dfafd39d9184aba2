import { createServer } from "node:net";
import { join } from "node:path";
import * as k8s from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { ApiFront } from "../support/api-front.js";
import {
  createNamespace,
  eventually,
  networkSuite,
  startNetworkOperator,
  writeKubeconfig,
} from "../support/kube-networks.js";

/**
 * The operator behind a front (a Rancher-style gateway: the API under a path, HTTP/1.1)
 * that answers for itself, as nginx does: an HTML page without the Audit-Id header of
 * the API server's answers. The cache's report says the answer is the front's, once for
 * every kind, instead of the page's HTML or a diagnosis of the API server.
 */
describe("the operator when a front of the API server answers for itself", () => {
  const net = networkSuite();
  const { admin } = net;
  const prefix = "/k8s/clusters/c-m-abc12";

  /** The operator through `server` on a new namespace until its log says `expected`; its log. */
  async function reportThrough(server: string, ca: Buffer, name: string, expected: string) {
    const namespace = await createNamespace(admin, name);
    const kubeconfig = await writeKubeconfig(
      join(net.bed.dir, name),
      { front: { server, ca } },
      "front",
    );
    const op = await startNetworkOperator({
      emulatorUrl: net.bed.emulator.url,
      namespaces: [namespace],
      kubeconfig,
    });
    try {
      await eventually(async () => op.logTail(50).includes(expected), 20_000).catch(
        (err: Error) => {
          throw new Error(`${err.message}; the operator's last lines:\n${op.logTail(5)}`);
        },
      );
      return op.logTail(Number.MAX_SAFE_INTEGER);
    } finally {
      await op.stop();
    }
  }

  it("says that a 404 is the front's, not that the CRDs may be missing, when the server URL's path is wrong", async () => {
    const front = await new ApiFront({ upstream: admin, protocols: "http/1.1", prefix }).start();
    try {
      const wrong = front.url.replace(prefix, "/k8s/clusters/c-m-wrong");
      const log = await reportThrough(
        wrong,
        front.caCert,
        "net-front-404",
        `nasvolumes.aidc.io, nasproducts.aidc.io (404 Not Found from a proxy in front of the API server, not from the API server: \\"404 Not Found\\" (is the path of the kubeconfig's server URL right?))`,
      );
      expect(log).not.toContain("are the CRDs installed?");
      expect(log).not.toContain("<html>");
    } finally {
      await front.stop();
    }
  }, 60_000);

  it("says that a 502 is the front's, its page's title only, when the front cannot reach the API server", async () => {
    const closed = await freedPort();
    const unreachable = new k8s.KubeConfig();
    unreachable.loadFromOptions({
      clusters: admin.clusters.map((c) => ({ ...c, server: `https://127.0.0.1:${closed}` })),
      users: admin.users,
      contexts: admin.contexts,
      currentContext: admin.currentContext,
    });
    const front = await new ApiFront({
      upstream: unreachable,
      protocols: "http/1.1",
      prefix,
    }).start();
    try {
      const log = await reportThrough(
        front.url,
        front.caCert,
        "net-front-502",
        `nasvolumes.aidc.io, nasproducts.aidc.io (502 Bad Gateway from a proxy in front of the API server, not from the API server: \\"502 Bad Gateway\\")`,
      );
      expect(log).not.toContain("<html>");
    } finally {
      await front.stop();
    }
  }, 60_000);
});

/** A loopback port nothing listens on (a server's, closed). */
async function freedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  await new Promise((r) => server.close(r));
  return port;
}
