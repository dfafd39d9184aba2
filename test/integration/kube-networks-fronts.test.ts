import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { controllers } from "../../src/controllers/index.js";
import { freePort } from "../../src/controlplane/controlplane.js";
import { ApiFront } from "../support/api-front.js";
import { ConnectProxy, startHttpsConnectProxy } from "../support/connect-proxy.js";
import {
  createNamespace,
  eventually,
  networkSuite,
  READY_MS,
  readyThrough,
  startNetworkOperator,
  UserNasVolumes,
  writeKubeconfig,
} from "../support/kube-networks.js";
import { startKubectlProxy } from "../support/kubectl-proxy.js";
import { TEST_API_KEY } from "../support/operator.js";
import { startOperatorProcess } from "../support/operator-process.js";
import { SocksProxy } from "../support/socks-proxy.js";

/**
 * The operator reaches the API server through what stands between them in real
 * clusters: `kubectl proxy` (plain HTTP/1.1), an HTTP CONNECT proxy named by the
 * kubeconfig or by HTTPS_PROXY, and a TLS gateway that speaks HTTP/1.1 only and serves
 * the API under a path with a token of its own. Each time a NasVolume becomes Ready.
 */
describe("the operator behind fronts of the API server", () => {
  const net = networkSuite();
  const { admin, access } = net;

  it("works through kubectl proxy: a plain http:// server that speaks HTTP/1.1", async () => {
    const proxy = await startKubectlProxy(inject("kubeconfigPath"));
    try {
      const kubeconfig = await writeKubeconfig(
        join(net.bed.dir, "kubectl-proxy"),
        { proxy: { server: proxy.url } },
        "proxy",
      );
      await readyThrough(net.bed, admin, kubeconfig, "net-kubectl-proxy");
    } finally {
      await proxy.stop();
    }
  });

  it("tunnels through the kubeconfig's proxy-url", async () => {
    const proxy = new ConnectProxy();
    await proxy.start();
    try {
      const kubeconfig = await writeKubeconfig(
        join(net.bed.dir, "proxy-url"),
        { proxied: { ...access, proxyUrl: proxy.url } },
        "proxied",
      );
      await readyThrough(net.bed, admin, kubeconfig, "net-proxy-url");
      const target = new URL(access.server).host;
      expect(proxy.tunnels).toBeGreaterThan(0);
      expect(new Set(proxy.targets)).toEqual(new Set([target]));
    } finally {
      await proxy.stop();
    }
  });

  it("tunnels through HTTPS_PROXY, and NO_PROXY naming the server bypasses it", async () => {
    // A name no resolver knows: only the proxy reaches it (it maps the name to the API
    // server's address). A loopback address would not do: like client-go, the operator
    // never sends loopback through an environment proxy.
    const name = "kube-apiserver.aidc.invalid";
    const proxy = new ConnectProxy({ [name]: "127.0.0.1" });
    await proxy.start();
    const port = new URL(access.server).port;
    const kubeconfig = await writeKubeconfig(
      join(net.bed.dir, "named"),
      { named: { ...access, server: `https://${name}:${port}`, tlsServerName: "localhost" } },
      "named",
    );
    /** An operator process with `env` on the kubeconfig above, watching a new namespace. */
    const start = async (env: Record<string, string>, prefix: string) => {
      const namespace = await createNamespace(admin, prefix);
      const logFile = join(net.bed.dir, `${prefix}.log`);
      const op = startOperatorProcess({
        kubeconfig,
        serviceBaseUrl: net.bed.emulator.url,
        apiKey: TEST_API_KEY,
        metricsPort: await freePort(),
        env: { AIDC_WATCH_NAMESPACES: namespace, AIDC_POLL_INTERVAL_MS: "500", ...env },
        logFile,
      });
      const log = () => readFile(logFile, "utf8").catch(() => "");
      return { op, namespace, log };
    };
    try {
      const proxied = await start(
        { HTTPS_PROXY: proxy.url, NO_PROXY: "elsewhere.invalid" },
        "net-https-proxy",
      );
      try {
        const nas = new UserNasVolumes(admin, proxied.namespace);
        await nas.create("through");
        await nas.waitReady("through", READY_MS).catch(async (err: Error) => {
          throw new Error(
            `${err.message}${(await proxied.log()).split("\n").slice(-15).join("\n")}`,
          );
        });
      } finally {
        await proxied.op.stop();
      }
      expect(proxy.tunnels).toBeGreaterThan(0);
      expect(new Set(proxy.targets)).toEqual(new Set([`${name}:${port}`]));

      // NO_PROXY names the server's domain: the operator connects directly, which here
      // cannot resolve the name; the proxy sees nothing.
      proxy.reset();
      const direct = await start(
        { HTTPS_PROXY: proxy.url, NO_PROXY: ".aidc.invalid" },
        "net-no-proxy",
      );
      try {
        await eventually(async () => (await direct.log()).includes(`ENOTFOUND ${name}`), READY_MS);
      } finally {
        await direct.op.stop();
      }
      expect(proxy.targets).toEqual([]);
    } finally {
      await proxy.stop();
    }
  }, 150_000);

  it("works through a TLS gateway that speaks only HTTP/1.1, under a path, with its own token", async () => {
    const prefix = "/k8s/clusters/c-abc";
    const token = "gateway-token-0123456789";
    const front = await new ApiFront({
      upstream: admin,
      protocols: "http/1.1",
      prefix,
      token,
    }).start();
    try {
      const kubeconfig = await writeKubeconfig(
        join(net.bed.dir, "gateway"),
        { gateway: { server: front.url, ca: front.caCert, token } },
        "gateway",
      );
      await readyThrough(net.bed, admin, kubeconfig, "net-gateway");
      // Every request came under the prefix with the token, over HTTP/1.1, watches too.
      expect(front.requests.length).toBeGreaterThan(0);
      expect(front.requests.filter((r) => r.status === 401 || r.status === 404)).toEqual([]);
      expect(new Set(front.requests.map((r) => r.httpVersion))).toEqual(new Set(["1.1"]));
      expect(front.requests.some((r) => r.query.get("watch") === "true")).toBe(true);
      // Each says who sent it: aidc-operator/<version> (<os>/<arch>) <commit>.
      const agents = new Set(front.requests.map((r) => r.userAgent));
      expect([...agents]).toEqual([expect.stringMatching(/^aidc-operator\/\S+ \(\w+\/\w+\) \S+$/)]);
    } finally {
      await front.stop();
    }
  });

  it("runs on the context --context names, not the kubeconfig's current one", async () => {
    const kubeconfig = await writeKubeconfig(
      join(net.bed.dir, "contexts"),
      // Port 1 on loopback: nothing listens, every connection is refused.
      { elsewhere: { server: "https://127.0.0.1:1" }, admin: access },
      "elsewhere",
    );
    await readyThrough(net.bed, admin, kubeconfig, "net-context", { context: "admin" });
  });

  it("authenticates to a proxy-url with its user and password, which no log line shows", async () => {
    const password = "pr0xy-pa55word-1";
    const proxy = new ConnectProxy({}, `aidc:${password}`);
    await proxy.start();
    const withPassword = (pw: string) => {
      const url = new URL(proxy.url);
      url.username = "aidc";
      url.password = pw;
      return url.href;
    };
    try {
      const kubeconfig = await writeKubeconfig(
        join(net.bed.dir, "proxy-auth"),
        { proxied: { ...access, proxyUrl: withPassword(password) } },
        "proxied",
      );
      const log = await readyThrough(net.bed, admin, kubeconfig, "net-proxy-auth");
      expect(proxy.tunnels).toBeGreaterThan(0);
      expect(proxy.refused).toBe(0);
      expect(log).not.toContain(password);

      // A wrong password: refused with 407, which the log says, without the password.
      proxy.reset();
      const wrong = "wr0ng-pa55word-2";
      const refusedConfig = await writeKubeconfig(
        join(net.bed.dir, "proxy-auth-wrong"),
        { proxied: { ...access, proxyUrl: withPassword(wrong) } },
        "proxied",
      );
      const namespace = await createNamespace(admin, "net-proxy-refused");
      const op = await startNetworkOperator({
        emulatorUrl: net.bed.emulator.url,
        namespaces: [namespace],
        kubeconfig: refusedConfig,
      });
      try {
        await eventually(async () => /\b407\b/.test(op.logTail(200)), READY_MS);
      } finally {
        await op.stop();
      }
      expect(proxy.refused).toBeGreaterThan(0);
      expect(proxy.tunnels).toBe(0);
      expect(op.logTail(Number.MAX_SAFE_INTEGER)).not.toContain(wrong);
    } finally {
      await proxy.stop();
    }
  }, 150_000);

  it("tunnels through an https:// proxy whose CA the kubeconfig's CA bundle holds, as kubectl trusts it", async () => {
    const { proxy, ca: proxyCa } = await startHttpsConnectProxy(net.bed.dir);
    try {
      const kubeconfig = await writeKubeconfig(
        join(net.bed.dir, "https-proxy"),
        {
          proxied: {
            ...access,
            // One bundle: the API server's CA and the proxy's.
            ca: Buffer.concat([access.ca ?? Buffer.alloc(0), Buffer.from("\n"), proxyCa]),
            proxyUrl: proxy.url,
          },
        },
        "proxied",
      );
      await readyThrough(net.bed, admin, kubeconfig, "net-https-proxy-ca");
      expect(proxy.url).toMatch(/^https:/);
      expect(proxy.tunnels).toBeGreaterThan(0);
    } finally {
      await proxy.stop();
    }
  });

  it("tunnels through a SOCKS5 proxy with a user and password: socks5:// as proxy-url, socks5h:// as HTTPS_PROXY", async () => {
    // A name only the proxy resolves, as behind a bastion's `ssh -D`.
    const name = "kube-apiserver.aidc.invalid";
    const password = "s0cks-pa55word-3";
    const socks = new SocksProxy({ [name]: "127.0.0.1" }, `aidc:${password}`);
    await socks.start();
    const port = new URL(access.server).port;
    const proxy = (scheme: string) =>
      `${scheme}://aidc:${password}@127.0.0.1:${new URL(socks.url).port}`;
    const named = { ...access, server: `https://${name}:${port}`, tlsServerName: "localhost" };
    try {
      const viaKubeconfig = await writeKubeconfig(
        join(net.bed.dir, "socks5"),
        { socks: { ...named, proxyUrl: proxy("socks5") } },
        "socks",
      );
      const first = await readyThrough(net.bed, admin, viaKubeconfig, "net-socks5");
      const tunnels = socks.tunnels;
      expect(tunnels).toBeGreaterThan(0);

      const viaEnv = await writeKubeconfig(join(net.bed.dir, "socks5h"), { socks: named }, "socks");
      const second = await readyThrough(net.bed, admin, viaEnv, "net-socks5h", {
        env: { HTTPS_PROXY: proxy("socks5h") },
      });
      expect(socks.tunnels).toBeGreaterThan(tunnels);
      expect(new Set(socks.targets)).toEqual(new Set([`${name}:${port}`]));
      expect(first + second).not.toContain(password);
    } finally {
      await socks.stop();
    }
  }, 150_000);

  it("opens every watch of 12 namespaces at once through an HTTP/1.1-only front, none queued", async () => {
    const front = await new ApiFront({ upstream: admin, protocols: "http/1.1" }).start();
    const namespaces = await Promise.all(
      Array.from({ length: 12 }, (_, i) => createNamespace(admin, `net-h1-watches-${i}`)),
    );
    const kubeconfig = await writeKubeconfig(
      join(net.bed.dir, "h1-watches"),
      { front: { server: front.url, ca: front.caCert } },
      "front",
    );
    // Every controller: 7 watches per namespace, 84 in all, each holding a connection.
    const op = await startNetworkOperator({
      emulatorUrl: net.bed.emulator.url,
      namespaces,
      kubeconfig,
      controllers,
    });
    try {
      const last = namespaces[11] ?? "";
      const nas = new UserNasVolumes(admin, last);
      await nas.create("last");
      await nas.waitReady("last", READY_MS, op);
      /** The resources watched in `ns`, its name taken out of their paths. */
      const watched = (ns: string) =>
        new Set(
          front.requests
            .filter((r) => r.query.get("watch") === "true" && r.path.includes(`/namespaces/${ns}/`))
            .map((r) => r.path.replace(`/namespaces/${ns}/`, "/namespaces/-/")),
        );
      const first = watched(namespaces[0] ?? "");
      expect(first.size).toBeGreaterThanOrEqual(7);
      for (const ns of namespaces) expect(watched(ns), ns).toEqual(first);
      // All of them open together: a connection each.
      expect(front.openConnections).toBeGreaterThanOrEqual(12 * first.size);
    } finally {
      await op.stop();
      await front.stop();
    }
  }, 150_000);
});
