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
  TcpProxy,
  writeKubeconfig,
} from "../support/kube-networks.js";

/**
 * The operator behind a front (a Rancher-style gateway: the API under a path, HTTP/1.1)
 * that answers for itself, as nginx does: an HTML page without the Audit-Id header of
 * the API server's answers; or that serves no more connections than its limit. The
 * cache's report says so, once for every kind, instead of the page's HTML, a diagnosis
 * of the API server or a bare connect timeout.
 */
describe("the operator when a front of the API server answers for itself", () => {
  const net = networkSuite();
  const { admin } = net;
  const prefix = "/k8s/clusters/c-m-abc12";

  /** The operator through `server` on a new namespace until its log says `expected`; its log. */
  async function reportThrough(
    server: string,
    ca: Buffer,
    name: string,
    expected: string,
    withinMs = 20_000,
  ) {
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
      await eventually(async () => op.logTail(50).includes(expected), withinMs).catch(
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

  it("says that a page with 200 is the front's, not the API server's, when the server URL's path leads to a web UI", async () => {
    const front = await new ApiFront({
      upstream: admin,
      protocols: "http/1.1",
      prefix,
      outsidePrefix: "page",
    }).start();
    try {
      const log = await reportThrough(
        front.url.replace(prefix, ""),
        front.caCert,
        "net-front-page",
        `nasvolumes.aidc.io, nasproducts.aidc.io (200 OK from a proxy in front of the API server, not from the API server: \\"200 OK\\" (is the path of the kubeconfig's server URL right?))`,
      );
      expect(log).not.toContain("the cache has synced");
    } finally {
      await front.stop();
    }
  }, 60_000);

  it("says that an empty 200 is the front's, not the API server's, when the server URL's path leads to no route of the front", async () => {
    // Caddy with `handle_path /k8s/*` answers 200 without a body where no route matches.
    const front = await new ApiFront({
      upstream: admin,
      protocols: "h2,http/1.1",
      prefix,
      outsidePrefix: "empty",
    }).start();
    try {
      const log = await reportThrough(
        front.url.replace(prefix, ""),
        front.caCert,
        "net-front-empty",
        "nasvolumes.aidc.io, nasproducts.aidc.io (200 OK from a proxy in front of the API server, not from the API server (is the path of the kubeconfig's server URL right?))",
      );
      expect(log).not.toContain("the cache has synced");
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

  it("says that the front is at its limit of connections when a connection it took is not served within the connect timeout", async () => {
    // HTTP/1.1: each watch and each request in flight holds a connection of its own.
    const front = await new ApiFront({ upstream: admin, protocols: "http/1.1", prefix }).start();
    const limited = new TcpProxy(Number(new URL(front.url).port));
    limited.maxOpen = 1;
    const port = await limited.start();
    try {
      const log = await reportThrough(
        front.url.replace(/:\d+\//, `:${port}/`),
        front.caCert,
        "net-front-limit",
        `127.0.0.1:${port} took the connection but did not answer its TLS handshake in 30 s: the API server, or a front of it, is at its limit of connections or stalled (haproxy's maxconn, nginx's worker_connections; over HTTP/1.1 each watch holds a connection)`,
        60_000,
      );
      expect(log).not.toContain("Connect Timeout Error");
    } finally {
      await limited.stop();
      await front.stop();
    }
  }, 120_000);
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
